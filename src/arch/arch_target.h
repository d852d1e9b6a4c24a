#pragma once

#include <string>
#include <vector>

#include "arch/compute_capability.h"

namespace archbuild {

// sm_90 (plain), sm_90a (arch-specific: that exact CC only),
// sm_100f (family-specific: that CC family, CUDA 12.9+).
enum class ArchVariant { plain, arch_specific, family_specific };

std::string variant_suffix(ArchVariant variant);  // "", "a", "f"

// One build target: a CC + variant, asking for SASS (machine code), PTX
// (JIT-able intermediate code), or both.
struct ArchTarget {
  ComputeCapability cc;
  ArchVariant variant = ArchVariant::plain;
  bool sass = true;
  bool ptx = false;

  // "9.0", "9.0a", "12.0+PTX", "compute_86" for PTX only: the canonical spelling.
  std::string canonical() const;
  // "sm_90a" (or "compute_90a" for a PTX-only target)
  std::string gpu_code_name() const;
  bool same_slot(const ArchTarget& other) const { return cc == other.cc && variant == other.variant; }
};

// A sorted, duplicate-free list of targets (same CC + variant merged,
// SASS and PTX requests unioned).
class ArchList {
 public:
  void add(const ArchTarget& target);
  const std::vector<ArchTarget>& targets() const { return targets_; }
  bool empty() const { return targets_.empty(); }
  // The targets' canonical spellings joined with ';' (the cmake dialect's form).
  std::string canonical() const;

 private:
  std::vector<ArchTarget> targets_;
};

}  // namespace archbuild
