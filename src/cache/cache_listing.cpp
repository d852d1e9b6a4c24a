#include "cache/cache_listing.h"

#include "cache/provenance.h"
#include "cache/store_listing.h"
#include "cache/store_maintenance.h"
#include "core/error.h"
#include "core/json_text.h"

namespace archbuild {

std::vector<ListingRow> listing_rows(const std::vector<StoreEntry>& entries) {
  std::vector<ListingRow> rows;
  for (const auto& entry : entries)
    for (const auto& wheel : entry.wheels)
      rows.push_back({entry.hash.substr(0, 12), short_publish_time(entry), validation_word(entry),
                      entry_wheel_bytes(entry), wheel.filename().string()});
  return rows;
}

nlohmann::json listing_json(const std::filesystem::path& cache_dir, const std::vector<StoreEntry>& entries) {
  auto list = nlohmann::json::array();
  for (const auto& entry : entries) list.push_back(store_entry_json(entry));
  return {{"cache_dir", cache_dir.string()}, {"entries", list}};
}

void check_key_prefix(const std::string& prefix) {
  if (prefix.size() < 4) fail_bad_input("give at least 4 characters of the key (see `archbuild cache ls`)");
}

StoreEntry entry_by_key_prefix(const WheelStore& store, const std::string& prefix) {
  check_key_prefix(prefix);
  auto found = store.matching(prefix);
  if (found.empty()) fail_bad_input("no published build's key starts with '" + prefix + "' (see `archbuild cache ls`)");
  if (found.size() > 1)
    fail_bad_input("'" + prefix + "' is ambiguous: " + std::to_string(found.size()) + " keys start with it");
  return std::move(found.front());
}

nlohmann::json shown_entry_json(const StoreEntry& entry) {
  auto out = store_entry_json(entry);
  out["key_inputs"] = entry.inputs.values();
  out["manifest"] = entry.manifest_json;
  return out;
}

std::optional<BuildSummary> build_summary(const BuildReport& manifest) {
  if (!manifest.build.is_object()) return std::nullopt;
  const auto& build = manifest.build;
  const auto& attempts = build.contains("attempts") && build["attempts"].is_array() && !build["attempts"].empty()
                             ? build["attempts"][0]
                             : nlohmann::json();
  return BuildSummary{json_number(build, "seconds"), json_number(attempts, "jobs"), json_number(build, "oom_retries")};
}

std::optional<std::filesystem::path> entry_sbom(const StoreEntry& entry) {
  std::error_code ec;
  if (!std::filesystem::exists(entry.dir / kSbomFile, ec)) return std::nullopt;
  return entry.dir / kSbomFile;
}

}  // namespace archbuild
