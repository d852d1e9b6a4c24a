#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "arch/arch_target.h"
#include "binary/binary_inventory.h"
#include "builder/project_switches.h"
#include "wheel/wheel_archive.h"

namespace archbuild {

struct ArchGap {
  std::string file;     // wheel member
  std::string target;   // "9.0", "12.0+PTX"
  std::string missing;  // "SASS that runs on 9.0", "PTX"
};

// What can be proved without a GPU: RECORD, and for each CUDA library in the
// wheel and each target, SASS that runs natively there, and PTX where +PTX
// was asked.
struct StaticValidation {
  RecordCheck record;
  std::vector<BinaryInventory> libraries;  // members with CUDA code
  std::vector<ArchGap> gaps;
  // Images for compute capabilities nobody asked for ("sm_100a" in a wheel
  // labelled sm90): only reported when extras are not allowed.
  std::vector<ArchGap> extras;
  std::vector<std::string> unreadable;
  // Set when the wheel has no CUDA code at all: why it probably has none and
  // what to set (the switch the project's setup.py reads, when known).
  std::string no_cuda_hint;
  // And the gates a build may set to get it, and those it must not (settable_cuda_switches).
  CudaSwitches cuda_switches;
  bool ok() const { return record.ok() && gaps.empty() && extras.empty() && unreadable.empty() && !libraries.empty(); }
  nlohmann::json to_json() const;
};

// `allow_extra_archs`: whether images for other compute capabilities are
// fine (`validate`: "does it serve these GPUs") or a lie in the label (a
// build's wheel, labelled by the asked targets).
StaticValidation validate_wheel_static(const std::filesystem::path& wheel, const ArchList& targets,
                                       bool allow_extra_archs = true);

// The targets the wheel's loadable CUDA code really holds (the union over its
// libraries): the label of a wheel built with the project's own arch flags.
ArchList archs_in_wheel(const std::filesystem::path& wheel);

}  // namespace archbuild
