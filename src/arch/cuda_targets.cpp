#include "arch/cuda_targets.h"

#include <algorithm>

namespace archbuild {

bool CudaTargets::can_target(ComputeCapability cc, ArchVariant variant) const {
  auto has = [&](const std::vector<ComputeCapability>& list) {
    return std::find(list.begin(), list.end(), cc) != list.end();
  };
  switch (variant) {
    case ArchVariant::plain: return has(targets);
    case ArchVariant::arch_specific: return has(arch_specific);
    case ArchVariant::family_specific: return has(family_specific);
  }
  return false;
}

}  // namespace archbuild
