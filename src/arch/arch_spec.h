#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "arch/arch_names.h"
#include "arch/arch_target.h"

namespace archbuild {

// One item of an arch spec as the user wrote it, before resolution.
struct ArchSpecItem {
  enum class Kind { targets, native, all, official };
  std::string text;  // exactly as written, for error messages
  Kind kind = Kind::targets;
  std::vector<ArchTarget> targets;  // for Kind::targets (a name expands to several)
  bool native_ptx = false;          // "native+PTX": PTX for the newest visible GPU too
};

// Parses "native", "native+PTX", "all", "official", "8.6", "86", "sm_86", "compute_86",
// "8.6+PTX", "9.0a", "10.0f", "Ampere", ... separated by ';' ',' or spaces.
// Names ("Hopper", "Ampere+Tegra") are the consumer's (arch_names.h):
// PyTorch's CMake's unless `names` says otherwise.
// Throws UserError(bad_input) naming the first malformed item.
std::vector<ArchSpecItem> parse_arch_spec(std::string_view spec, const ArchNames& names = pytorch_cmake_arch_names());

// Parses a list of targets as a build record stores it ("8.0;9.0+PTX", no
// keywords or names). Throws UserError(bad_input) naming the bad item.
ArchList parse_arch_list(std::string_view list);

// Parses one target item (no keywords). Throws UserError(bad_input).
std::vector<ArchTarget> parse_arch_item(std::string_view item, const ArchNames& names = pytorch_cmake_arch_names());

}  // namespace archbuild
