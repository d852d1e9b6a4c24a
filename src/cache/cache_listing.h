#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cache/build_report.h"
#include "cache/wheel_store.h"

namespace archbuild {

// What `cache ls` and `cache show` list of the store, apart from how the
// terminal lays it out.

// One line of `cache ls`: a wheel of an entry (an entry with two wheels has two).
struct ListingRow {
  std::string key;         // the key hash's first 12 characters
  std::string published;   // short_publish_time
  std::string validation;  // validation_word
  uintmax_t bytes = 0;     // the entry's wheels together
  std::string wheel;       // the wheel's file name
};

// The rows of `entries`, in their order (newest first, as the store lists them).
std::vector<ListingRow> listing_rows(const std::vector<StoreEntry>& entries);

// `cache ls --json`: {"cache_dir", "entries": [store_entry_json...]}.
nlohmann::json listing_json(const std::filesystem::path& cache_dir, const std::vector<StoreEntry>& entries);

// `cache show PREFIX` takes at least 4 characters of a key: UserError(bad_input) when fewer.
void check_key_prefix(const std::string& prefix);
// The one entry whose key starts with `prefix`. UserError(bad_input) when
// check_key_prefix refuses it, or no key or more than one starts with it.
StoreEntry entry_by_key_prefix(const WheelStore& store, const std::string& prefix);

// `cache show --json`: store_entry_json with the key's inputs and the manifest as written.
nlohmann::json shown_entry_json(const StoreEntry& entry);

// The build line of `cache show`, from the manifest's build record: its
// seconds, the first attempt's jobs and the OOM retries (0 where absent).
struct BuildSummary {
  double seconds = 0;
  double jobs = 0;
  double oom_retries = 0;
};
// nullopt when the manifest has no build record (a cache hit's, or an old one's).
std::optional<BuildSummary> build_summary(const BuildReport& manifest);

// The entry's CycloneDX SBOM, when it was published with one.
std::optional<std::filesystem::path> entry_sbom(const StoreEntry& entry);

}  // namespace archbuild
