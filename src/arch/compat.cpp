#include "arch/compat.h"

namespace archbuild {

std::string KernelImage::name() const {
  return (kind == Kind::sass ? "sm_" : "compute_") + std::to_string(cc.number()) + variant_suffix(variant);
}

std::string to_string(RunVerdict verdict) {
  switch (verdict) {
    case RunVerdict::native: return "native";
    case RunVerdict::ptx_jit: return "ptx-jit";
    case RunVerdict::no_kernel_image: return "no-kernel-image";
  }
  return "?";
}

namespace {

// 10.1 (Thor, renamed 11.0 in CUDA 13) is a Tegra part outside the 10.x family.
bool outside_family(ComputeCapability cc) { return is_tegra_only(cc) || cc == ComputeCapability{10, 1}; }

// SASS for `built` runs on `device`: same major, device minor >= built minor,
// with Tegra parts running (and being run by) only their own code.
bool sass_compatible(ComputeCapability built, ComputeCapability device) {
  if (built == device) return true;
  if (outside_family(built) || outside_family(device)) return false;
  return built.major == device.major && device.minor >= built.minor;
}

}  // namespace

RunVerdict can_run(const KernelImage& image, ComputeCapability device) {
  bool fits = false;
  switch (image.variant) {
    case ArchVariant::arch_specific:
      fits = image.cc == device;  // sm_90a / compute_90a: that exact CC only
      break;
    case ArchVariant::family_specific:
      fits = sass_compatible(image.cc, device);  // sm_100f: 10.0 and 10.3
      break;
    case ArchVariant::plain:
      fits = image.kind == KernelImage::Kind::sass ? sass_compatible(image.cc, device)
                                                   : image.cc <= device;  // PTX JITs forward
      break;
  }
  if (!fits) return RunVerdict::no_kernel_image;
  return image.kind == KernelImage::Kind::sass ? RunVerdict::native : RunVerdict::ptx_jit;
}

RunVerdict best_verdict(RunVerdict a, RunVerdict b) {
  auto rank = [](RunVerdict v) { return v == RunVerdict::native ? 2 : v == RunVerdict::ptx_jit ? 1 : 0; };
  return rank(a) >= rank(b) ? a : b;
}

RunVerdict best_verdict(const std::vector<ArchTarget>& targets, ComputeCapability device) {
  RunVerdict best = RunVerdict::no_kernel_image;
  for (const auto& target : targets) {
    if (target.sass) best = best_verdict(best, can_run({KernelImage::Kind::sass, target.cc, target.variant}, device));
    if (target.ptx) best = best_verdict(best, can_run({KernelImage::Kind::ptx, target.cc, target.variant}, device));
  }
  return best;
}

}  // namespace archbuild
