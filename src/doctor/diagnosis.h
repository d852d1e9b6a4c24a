#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "arch/compat.h"
#include "doctor/distribution_info.h"
#include "doctor/fix_ladder.h"
#include "doctor/official_builds.h"
#include "doctor/package_scan.h"
#include "doctor/python_probe.h"
#include "toolchain/toolkit_facts.h"

namespace archbuild {

// The one verdict of a package, which the text report and --json both show.
// not_judged: nothing in it was judged for a device, so it is neither fine
// nor a problem (see PackageDiagnosis::not_judged_reason).
enum class PackageVerdict { ok, ptx_jit, no_kernel_image, driver_too_old, not_judged };
// "ok", "ptx-jit", "no-kernel-image", "driver-too-old", "not-judged"
std::string to_string(PackageVerdict verdict);

struct PackageDiagnosis {
  std::string name;
  std::string site_dir;
  PackageVerdict verdict = PackageVerdict::ok;
  std::vector<std::string> problems;  // one line per file x device that fails
  std::vector<Fix> fixes;             // cheapest first, each with why and its exact lines
  std::vector<const BinaryInventory*> files;
  // Why the verdict is not_judged: NVIDIA's own runtime libraries (nvidia/*)
  // may load kernels at run time from outside their fatbins (libcufft carries
  // sm_75 SASS only, yet runs on every GPU its CUDA supports), so their
  // inventory is shown, not judged; a package none of whose CUDA code could be
  // read has nothing to judge.
  std::string not_judged_reason;
  bool judged() const { return verdict != PackageVerdict::not_judged; }
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
  std::optional<CudaVersion> build_cuda;         // the toolkit archbuild would build with
  const OfficialBuildTable* official = nullptr;  // official torch builds, for the cheapest fix
  std::vector<CachedTorch> cached_torch;         // torch builds in archbuild's cache
  // The installed distribution of each package (by PackageBinaries::name), where found.
  std::map<std::string, DistributionInfo> distributions;
};

// Pure: from what was found to verdicts and fixes. No I/O.
Diagnosis diagnose(const DiagnosisInputs& inputs);

}  // namespace archbuild
