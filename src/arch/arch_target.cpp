#include "arch/arch_target.h"

#include <algorithm>

namespace archbuild {

std::string variant_suffix(ArchVariant variant) {
  switch (variant) {
    case ArchVariant::plain: return "";
    case ArchVariant::arch_specific: return "a";
    case ArchVariant::family_specific: return "f";
  }
  return "";
}

std::string ArchTarget::canonical() const {
  if (!sass) return "compute_" + std::to_string(cc.number()) + variant_suffix(variant);
  return cc.dotted() + variant_suffix(variant) + (ptx ? "+PTX" : "");
}

std::string ArchTarget::gpu_code_name() const {
  return (sass ? "sm_" : "compute_") + std::to_string(cc.number()) + variant_suffix(variant);
}

void ArchList::add(const ArchTarget& target) {
  for (auto& existing : targets_) {
    if (existing.same_slot(target)) {
      existing.sass = existing.sass || target.sass;
      existing.ptx = existing.ptx || target.ptx;
      return;
    }
  }
  targets_.push_back(target);
  std::sort(targets_.begin(), targets_.end(), [](const ArchTarget& a, const ArchTarget& b) {
    if (a.cc != b.cc) return a.cc < b.cc;
    return a.variant < b.variant;
  });
}

std::string ArchList::canonical() const {
  std::string out;
  for (const auto& target : targets_) {
    if (!out.empty()) out += ';';
    out += target.canonical();
  }
  return out;
}

}  // namespace archbuild
