#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cache/cache_key.h"

namespace archbuild {

// A published build: <cache>/store/<key hash>/ with key.txt, manifest.json
// and wheels/. Entries appear whole (written aside, then renamed into place).
struct StoreEntry {
  std::filesystem::path dir;
  std::vector<std::filesystem::path> wheels;
};

class WheelStore {
 public:
  explicit WheelStore(std::filesystem::path cache_dir);
  std::optional<StoreEntry> find(const CacheKey& key) const;
  // Copies the wheels and writes key.txt + manifest.json, atomically.
  StoreEntry publish(const CacheKey& key, const std::vector<std::filesystem::path>& wheels,
                     const std::string& manifest_json) const;
  // Keeps a wheel that failed validation, with its report, out of the store.
  std::filesystem::path quarantine(const CacheKey& key, const std::vector<std::filesystem::path>& wheels,
                                   const std::string& report_json) const;
  std::filesystem::path lock_path(const CacheKey& key) const;
  const std::filesystem::path& root() const { return root_; }

 private:
  std::filesystem::path root_;
  std::filesystem::path quarantine_;
};

// flock held for one key: a second build of the same key waits, then reuses
// what the first published; builds of other keys run side by side.
class KeyLock {
 public:
  explicit KeyLock(const std::filesystem::path& path);
  ~KeyLock();
  KeyLock(const KeyLock&) = delete;
  KeyLock& operator=(const KeyLock&) = delete;
  bool waited() const { return waited_; }

 private:
  int fd_ = -1;
  bool waited_ = false;
};

}  // namespace archbuild
