#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cache/build_report.h"
#include "cache/cache_key.h"

namespace archbuild {

// A published build: <cache>/store/<key hash>/ with key.txt, manifest.json
// and wheels/. Entries appear whole (written aside, then renamed into place).
struct StoreEntry {
  std::filesystem::path dir;
  std::string hash;  // the directory's name: sha256 of key.txt
  std::vector<std::filesystem::path> wheels;
  std::map<std::string, std::string> key;                // key.txt parsed
  std::optional<BuildReport> manifest;                   // absent when manifest.json is missing or not JSON
  nlohmann::json manifest_json;                          // the file as written (null when unreadable), for display
  std::filesystem::file_time_type published;             // manifest.json's time
  std::string value(const std::string& key_name) const;  // "" when absent
};

class WheelStore {
 public:
  explicit WheelStore(std::filesystem::path cache_dir);
  std::optional<StoreEntry> find(const CacheKey& key) const;
  // Every published entry, newest first.
  std::vector<StoreEntry> entries() const;
  // Entries whose hash starts with `prefix` (for `cache show`).
  std::vector<StoreEntry> matching(const std::string& prefix) const;
  // Copies the wheels and writes key.txt + manifest.json, atomically.
  StoreEntry publish(const CacheKey& key, const std::vector<std::filesystem::path>& wheels,
                     const std::string& manifest_json) const;
  // Keeps a wheel that failed validation, with its report, out of the store.
  std::filesystem::path quarantine(const CacheKey& key, const std::vector<std::filesystem::path>& wheels,
                                   const std::string& report_json) const;
  // Takes an entry out of the store: renamed away first (readers stop seeing
  // it at once), then deleted.
  void remove(const StoreEntry& entry) const;
  // Temporary dirs of publishes that never finished: their process (on this
  // host) is gone, or, written by another host, they are over an hour old.
  std::vector<std::filesystem::path> leftovers() const;
  std::filesystem::path lock_path(const CacheKey& key) const;
  const std::filesystem::path& root() const { return root_; }

 private:
  std::optional<StoreEntry> load(const std::filesystem::path& dir) const;
  std::filesystem::path root_;
  std::filesystem::path quarantine_;
};

// Where a publish pauses between writing its entry aside and renaming it into
// place, when ARCHBUILD_PUBLISH_PAUSE_MS is set: the tests' way to kill a
// build mid-publish (docs/TESTING.md).
void pause_for_publish_test();

}  // namespace archbuild
