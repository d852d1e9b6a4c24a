#pragma once

#include <string>
#include <vector>

#include "arch/arch_target.h"

namespace archbuild {

// One image in a fatbin: SASS (a cubin for sm_XY[a|f]) or PTX (compute_XY[a|f]).
struct KernelImage {
  enum class Kind { sass, ptx };
  Kind kind = Kind::sass;
  ComputeCapability cc;
  ArchVariant variant = ArchVariant::plain;

  std::string name() const;  // "sm_90a", "compute_86"
};

enum class RunVerdict {
  native,           // SASS the device runs as is
  ptx_jit,          // only by JIT-compiling PTX (needs a new enough driver)
  no_kernel_image,  // cannot run there at all
};

std::string to_string(RunVerdict verdict);  // "native", "ptx-jit", "no-kernel-image"

// The one place that knows CUDA's binary compatibility rules (docs/CUDA_FACTS.md#compat).
RunVerdict can_run(const KernelImage& image, ComputeCapability device);

// The best verdict over a set of images (native > ptx-jit > no-kernel-image).
RunVerdict best_verdict(RunVerdict a, RunVerdict b);

// The best verdict of a build's targets (the SASS and PTX each asks for) on a device.
RunVerdict best_verdict(const std::vector<ArchTarget>& targets, ComputeCapability device);

}  // namespace archbuild
