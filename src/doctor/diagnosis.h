#pragma once

#include <optional>
#include <string>
#include <vector>

#include "arch/compat.h"
#include "doctor/package_scan.h"
#include "doctor/python_probe.h"
#include "toolchain/toolkit_facts.h"

namespace archbuild {

enum class PackageVerdict { ok, ptx_jit, no_kernel_image, driver_too_old };
std::string to_string(PackageVerdict verdict);  // "ok", "ptx-jit", "no-kernel-image", "driver-too-old"

struct PackageDiagnosis {
  std::string name;
  std::string site_dir;
  PackageVerdict verdict = PackageVerdict::ok;
  std::vector<std::string> problems;  // one line per file x device that fails
  std::vector<std::string> fixes;     // exact commands or actions
  std::vector<const BinaryInventory*> files;
  // NVIDIA's own runtime libraries (nvidia/*) may load kernels at run time
  // from outside their fatbins (libcufft carries sm_75 SASS only, yet runs on
  // every GPU its CUDA supports): their inventory is shown, not judged.
  bool judged = true;
};

struct Finding {
  bool is_problem = false;  // false: a warning
  std::string message;
  std::string fix;
};

struct Diagnosis {
  std::vector<PackageDiagnosis> packages;
  std::vector<Finding> findings;
  bool has_problem() const;
};

struct DiagnosisInputs {
  const PythonEnvironment* python = nullptr;
  const std::vector<PackageBinaries>* packages = nullptr;
  std::vector<ComputeCapability> devices;
  std::optional<CudaVersion> driver_cuda;   // newest CUDA the driver supports, if known
  std::optional<CudaVersion> nvcc_on_path;  // the nvcc a user would build extensions with
  const ToolkitTable* table = nullptr;
  std::optional<CudaVersion> build_cuda;  // the toolkit archbuild would build with
};

// Pure: from what was found to verdicts and fixes. No I/O.
Diagnosis diagnose(const DiagnosisInputs& inputs);

}  // namespace archbuild
