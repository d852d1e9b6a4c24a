#include "cache/store_listing.h"

#include "cache/store_maintenance.h"

namespace archbuild {

std::string validation_word(const StoreEntry& entry) {
  return entry.manifest ? to_string(entry.manifest->validation_level) : "?";
}

std::string short_publish_time(const StoreEntry& entry) {
  auto text = entry.manifest ? entry.manifest->published_at : "";
  return text.size() >= 16 ? text.substr(0, 10) + " " + text.substr(11, 5) : "?";
}

nlohmann::json store_entry_json(const StoreEntry& entry) {
  std::vector<std::string> wheels;
  for (const auto& wheel : entry.wheels) wheels.push_back(wheel.filename().string());
  const auto launched = entry.manifest ? entry.manifest->kernels_launched() : std::nullopt;
  return {{"key", entry.hash},
          {"dir", entry.dir.string()},
          {"recipe", entry.inputs.recipe()},
          {"ref", entry.inputs.ref()},
          {"arch_list", entry.inputs.arch_list()},
          {"cuda", entry.inputs.cuda()},
          {"wheels", wheels},
          {"bytes", entry_wheel_bytes(entry)},
          {"published_at", entry.manifest ? entry.manifest->published_at : ""},
          {"validation", validation_word(entry)},
          {"kernels_launched", launched ? nlohmann::json(*launched) : nlohmann::json()},
          {"kernel_census", entry.manifest ? entry.manifest->kernel_census_summary() : ""}};
}

}  // namespace archbuild
