#pragma once

#include <optional>
#include <string>
#include <vector>

#include "arch/arch_target.h"
#include "arch/cuda_version.h"
#include "doctor/official_builds.h"

namespace archbuild {

// One way out of "no kernel image", with why it works and the exact lines to
// run. Doctor lists them cheapest first (docs/FIXING_NO_KERNEL_IMAGE.md).
struct Fix {
  enum class Kind {
    official_build,    // an official wheel that runs natively: minutes
    ptx_jit,           // an official wheel whose PTX the driver JIT-compiles: a stopgap
    cached_build,      // a build archbuild already made that fits
    official_variant,  // the same project's build for another CUDA (cupy-cuda12x)
    source_build,      // archbuild builds it: hours for torch
    driver,            // a newer NVIDIA driver
  };
  Kind kind = Kind::source_build;
  std::string why;
  std::vector<std::string> lines;  // empty: the fix does not exist here ("none", and why)
};
std::string to_string(Fix::Kind kind);  // "official-build", "ptx-jit", ...

// A torch build in archbuild's cache, with the line that installs it.
struct CachedTorch {
  std::string version;  // "2.11.0+cu130.sm61"
  std::optional<CudaVersion> cuda;
  std::vector<ArchTarget> targets;
  std::string install_line;
  std::string machine = "x86_64";  // the CPU it was built on: it installs only there
};

struct TorchFixInputs {
  std::vector<ComputeCapability> devices;
  std::optional<CudaVersion> driver_cuda;  // unknown (--device-cc without a driver): not judged
  std::string python_version;              // "3.11" ("" when unknown: every release counts)
  std::vector<std::string> companions;     // installed beside torch: "torchvision", "torchaudio"
  const OfficialBuildTable* official = nullptr;
  std::vector<CachedTorch> cached;
  std::string source_command;  // "archbuild torch --arch 6.1 --ref v2.11.0 --cuda 12.9"
};

// Official build (the newest release that runs natively on every device with
// this driver and Python, or "none" and why), PTX JIT when no official build
// is native but one's PTX covers the devices, a cached build that fits, then
// the source build.
std::vector<Fix> torch_fixes(const TorchFixInputs& inputs);

// The pip and uv lines that install an official build (and its companions).
std::vector<std::string> official_install_lines(const OfficialBuild& build, const std::vector<std::string>& companions);

// A package's build for another CUDA major, named by the convention its
// project uses for CUDA variants ("cupy-cuda13x" -> "cupy-cuda12x",
// "jax-cuda13-plugin" -> "jax-cuda12-plugin", "foo-cu13" -> "foo-cu12"), or
// nullopt when the name follows none.
std::optional<std::string> cuda_variant_name(const std::string& distribution, int cuda_major);
// The CUDA major such a name says it is built with.
std::optional<int> cuda_major_of_name(const std::string& distribution);

}  // namespace archbuild
