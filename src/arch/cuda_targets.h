#pragma once

#include <optional>
#include <string>
#include <vector>

#include "arch/arch_target.h"
#include "arch/cuda_version.h"

namespace archbuild {

// What one CUDA release can target: the part of a toolkit's facts that arch
// resolution reads. toolchain/'s ToolkitFacts extends it with the driver and
// host compiler limits, so arch/ never depends on toolchain/.
struct CudaTargets {
  CudaVersion version;
  std::vector<ComputeCapability> targets;                       // sm_XY / compute_XY
  std::vector<ComputeCapability> arch_specific;                 // sm_XYa
  std::vector<ComputeCapability> family_specific;               // sm_XYf
  std::optional<std::string> torch_official_arch_list;          // PyTorch's release list (x86-64 wheels)
  std::optional<std::string> torch_official_arch_list_aarch64;  // its aarch64 (SBSA) wheels' list
  // GPUs this release names anew (it and later releases use `to`): Jetson
  // Thor is 10.1 to CUDA 12.x and 11.0 from CUDA 13.0 on.
  struct Rename {
    ComputeCapability from;
    ComputeCapability to;
    std::string gpu;  // "Jetson Thor"
  };
  std::vector<Rename> renamed;

  bool can_target(ComputeCapability cc, ArchVariant variant) const;
};

}  // namespace archbuild
