#pragma once

#include <optional>
#include <string>
#include <vector>

#include "arch/compute_capability.h"
#include "arch/cuda_version.h"
#include "doctor/compat_matrix.h"
#include "doctor/diagnosis.h"
#include "doctor/fix_ladder.h"
#include "doctor/official_builds.h"
#include "doctor/package_scan.h"
#include "doctor/python_probe.h"
#include "gpu/gpu_probe.h"
#include "toolchain/toolkit_facts.h"

namespace archbuild {

// What `archbuild doctor` judges against, decided from its options and the
// machine's facts before anything is printed: the devices, the driver, whose
// official builds count, and each interpreter's diagnosis inputs.

// The devices to diagnose: those of --device-cc, else the visible GPUs'.
struct DoctorDevices {
  std::vector<ComputeCapability> ccs;
  bool from_gpus = false;  // none was given: the GPUs' distinct CCs
};
// UserError(bad_input) for a given CC no CUDA release in `table` targets (a typo?).
DoctorDevices devices_to_diagnose(const std::vector<ComputeCapability>& given, const ToolkitTable& table,
                                  const GpuReport& gpus);

// --driver VERSION ("535.104.05"): the newest CUDA such a driver supports.
// UserError(bad_input) when it is not a driver version or older than every
// CUDA release `table` knows.
CudaVersion cuda_of_driver_option(const std::string& driver, const ToolkitTable& table);

// Whose official builds count: --machine when given, else the interpreter's
// CPU (its wheels' platform), else this host's.
std::string machine_to_judge(const std::string& machine_option, const std::string& interpreter_machine = "");

// The CUDA of the nvcc on PATH, the one a user would build extensions with.
std::optional<CudaVersion> nvcc_on_path_version();

// What doctor knows before any interpreter is probed.
struct DoctorFacts {
  const ToolkitTable* table = nullptr;
  const OfficialBuildTable* official = nullptr;      // every machine's
  const std::vector<CachedTorch>* cached = nullptr;  // the cache's torch builds, every machine's
  std::vector<ComputeCapability> devices;
  std::optional<CudaVersion> driver_cuda;  // the driver's, or --driver's
  std::optional<CudaVersion> build_cuda;   // the toolkit archbuild would build with, if any
  std::string machine_option;              // --machine, "" when not given
};

// `doctor --matrix`: the official and cached builds for --machine (default
// this host's CPU) on each device.
CompatMatrix doctor_matrix(const DoctorFacts& facts);

// One interpreter's DiagnosisInputs: the official and cached builds for its
// CPU (the official ones put in `official_here`, which they point to), the
// installed distribution of each package found.
DiagnosisInputs diagnosis_inputs(const DoctorFacts& facts, const PythonEnvironment& python,
                                 const std::vector<PackageBinaries>& packages, std::optional<CudaVersion> nvcc_on_path,
                                 OfficialBuildTable& official_here);

}  // namespace archbuild
