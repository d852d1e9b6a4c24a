#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "binary/binary_inventory.h"
#include "binary/binary_walker.h"
#include "binary/kernel_names.h"

namespace archbuild {

// "9.0" strings from --device-cc; throws bad_input naming a bad one.
std::vector<ComputeCapability> parse_device_ccs(const std::vector<std::string>& texts);

nlohmann::json to_json(const BinaryInventory& inventory, const std::vector<ComputeCapability>& devices);
// {"count": N, "by_arch": {"sm_90": [{"name": mangled, "demangled": ...}]}, "error": ...}
nlohmann::json to_json(const BinaryKernels& kernels);
// "sm_80 x2  sm_90a x2"
std::string format_counts(const ArchCounts& counts);

// Prints inventories as they arrive (plain text), or collects them for one
// JSON document at the end.
class InventoryPrinter {
 public:
  InventoryPrinter(std::vector<ComputeCapability> devices, bool json, bool all_files)
      : devices_(std::move(devices)), json_(json), all_files_(all_files) {}
  // `kernels`: the binary's kernel census, listed when given (inspect --kernels).
  void add(const BinaryInventory& inventory, const BinaryKernels* kernels = nullptr);
  void finish(const WalkStats& stats);
  bool any_without_kernel_image() const { return without_kernel_image_; }

 private:
  std::vector<ComputeCapability> devices_;
  bool json_, all_files_;
  bool without_kernel_image_ = false;
  nlohmann::json files_ = nlohmann::json::array();
};

}  // namespace archbuild
