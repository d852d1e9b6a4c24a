#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "arch/arch_target.h"
#include "arch/compat.h"
#include "arch/cuda_version.h"

namespace archbuild {

// Whether a driver supporting `driver_cuda` runs code built by `build_cuda`
// that reaches a device as `verdict`: SASS on any CUDA of the same major or
// newer (CUDA's minor version compatibility); JIT-compiling PTX needs at
// least the CUDA that wrote it.
bool driver_runs(RunVerdict verdict, CudaVersion build_cuda, CudaVersion driver_cuda);

// One official PyTorch wheel build: a release for one CUDA variant and one
// host CPU, as published on https://download.pytorch.org/whl/<variant>,
// from toolchains/torch/official_builds.toml (sources in docs/FIXING_NO_KERNEL_IMAGE.md).
struct OfficialBuild {
  std::string torch;                // "2.11.0"
  std::string torchvision;          // the release paired with it ("0.26.0"), "" when none
  std::string torchaudio;           // "" when none
  std::vector<std::string> python;  // "3.10", ...: the interpreters it has wheels for
  CudaVersion cuda;
  std::string machine = "x86_64";   // the wheels' platform: "x86_64" or "aarch64" (SBSA)
  std::string arch_list;            // TORCH_CUDA_ARCH_LIST in PyTorch's build script
  std::vector<ArchTarget> targets;  // what its wheels hold: `wheel_targets` where inspected, else the list
  bool inspected = false;           // `targets` read off the published wheel
  std::string source;               // where the facts come from

  std::string variant() const;    // "cu130"
  std::string index_url() const;  // "https://download.pytorch.org/whl/cu130"
  // Native, PTX JIT or no kernel image for a device: CUDA's rules (arch/compat.h).
  RunVerdict verdict_for(ComputeCapability device) const;
  bool driver_runs_sass(CudaVersion driver_cuda) const { return driver_runs(RunVerdict::native, cuda, driver_cuda); }
  bool driver_jits_ptx(CudaVersion driver_cuda) const { return driver_runs(RunVerdict::ptx_jit, cuda, driver_cuda); }
  bool has_python(const std::string& major_minor) const;
};

// Every official build, newest release first and, within a release, newest CUDA first.
class OfficialBuildTable {
 public:
  // Throws UserError(bad_input) naming the file, line and key of a bad entry.
  static OfficialBuildTable load(const std::filesystem::path& file);
  static OfficialBuildTable load_default();  // data_dir()/toolchains/torch/official_builds.toml
  static OfficialBuildTable from(std::vector<OfficialBuild> builds);

  const std::vector<OfficialBuild>& all() const { return builds_; }
  std::vector<std::string> releases() const;  // newest first
  // The builds for hosts of this CPU ("x86_64", "aarch64").
  OfficialBuildTable for_machine(const std::string& machine) const;

 private:
  std::vector<OfficialBuild> builds_;
};

// -1, 0, 1 for PEP 440 release numbers of the form N(.N)* ("2.11.0" < "2.11.1").
int compare_release(const std::string& a, const std::string& b);

}  // namespace archbuild
