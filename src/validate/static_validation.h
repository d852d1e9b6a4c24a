#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "arch/arch_target.h"
#include "binary/binary_inventory.h"
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
  std::vector<std::string> unreadable;
  bool ok() const { return record.ok() && gaps.empty() && unreadable.empty() && !libraries.empty(); }
  nlohmann::json to_json() const;
};

StaticValidation validate_wheel_static(const std::filesystem::path& wheel, const ArchList& targets);

}  // namespace archbuild
