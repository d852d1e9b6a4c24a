#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cache/build_report.h"
#include "cache/cache_key.h"
#include "cache/key_inputs.h"

namespace archbuild {

// The most archbuild reads of an entry's key.txt and manifest.json: far
// above what it writes (a key text is a few hundred bytes, a manifest some
// kilobytes per wheel), far below what would exhaust memory.
inline constexpr uint64_t kMaxKeyTextBytes = 1ull << 20;
inline constexpr uint64_t kMaxManifestBytes = 64ull << 20;

// A published build: <cache>/store/<key hash>/ with key.txt, manifest.json
// and wheels/. Entries appear whole (written aside, then renamed into place).
struct StoreEntry {
  std::filesystem::path dir;
  std::string hash;  // the directory's name: sha256 of key.txt
  std::vector<std::filesystem::path> wheels;
  // Variant wheels (PEP 825) of the same builds, each with NAME.json beside
  // it (its variant.json): what the index lists for variant-aware installers.
  std::vector<std::filesystem::path> variants;
  // What wheels/ and variants/ hold that archbuild never writes there: a
  // symbolic link (to a file outside the cache, say), a directory, a FIFO.
  // Never listed as wheels or variants (gc and push never link or copy
  // them); `cache verify` names each.
  std::vector<std::filesystem::path> foreign;
  std::string key_text;                       // key.txt as written
  KeyInputs inputs;                           // key.txt parsed: what the build was
  std::optional<BuildReport> manifest;        // absent when manifest.json is missing or not JSON
  nlohmann::json manifest_json;               // the file as written (null when unreadable), for display
  std::filesystem::file_time_type published;  // manifest.json's time
};

class WheelStore;

// A publish written aside (.tmp-KEY@HOST@PID in the store), which no reader
// sees until commit() renames it into place; removed if never committed.
class StagedEntry {
 public:
  StagedEntry(const WheelStore& store, CacheKey key, std::filesystem::path temporary);
  StagedEntry(StagedEntry&& other) noexcept;
  StagedEntry& operator=(StagedEntry&&) = delete;
  ~StagedEntry();
  // Renames it over store/KEY; the caller holds the key's lock. A stale
  // entry there goes aside first (set_aside() lists it) and stays until
  // remove_replaced(): called once the index no longer links its wheels, so
  // that a kill or a failed refresh before leaves an index one entry behind
  // that `cache verify` tells from an edit (and `cache gc` removes it then).
  StoreEntry commit();
  // Deletes the entry commit() replaced, if any.
  void remove_replaced();

 private:
  const WheelStore* store_;
  CacheKey key_;
  std::filesystem::path temporary_;  // empty once committed or moved from
  std::filesystem::path replaced_;   // the entry commit() put aside, until remove_replaced()
};

class WheelStore {
 public:
  explicit WheelStore(std::filesystem::path cache_dir);
  std::optional<StoreEntry> find(const CacheKey& key) const;
  // Every published entry, newest first.
  std::vector<StoreEntry> entries() const;
  // Entries whose hash starts with `prefix` (for `cache show`).
  std::vector<StoreEntry> matching(const std::string& prefix) const;
  // Copies the wheels and writes key.txt + manifest.json, atomically: stage()
  // then commit(), and the entry it replaces deleted at once. A full disk is UserError(environment) "no space left on
  // <store>", with what was written aside removed.
  // `extra` files (name, content) go beside them: the provenance and SBOM.
  StoreEntry publish(const CacheKey& key, const std::vector<std::filesystem::path>& wheels,
                     const std::string& manifest_json,
                     const std::vector<std::pair<std::string, std::string>>& extra = {},
                     const std::vector<std::filesystem::path>& variants = {}) const;
  // publish()'s first half, for `cache push`: the copy is written while the
  // source entry is locked, and committed under this store's key lock.
  StagedEntry stage(const CacheKey& key, const std::vector<std::filesystem::path>& wheels,
                    const std::string& manifest_json,
                    const std::vector<std::pair<std::string, std::string>>& extra = {},
                    const std::vector<std::filesystem::path>& variants = {}) const;
  // Keeps a wheel that failed validation, with its report, out of the store.
  std::filesystem::path quarantine(const CacheKey& key, const std::vector<std::filesystem::path>& wheels,
                                   const std::string& report_json) const;
  // Takes an entry out of the store under its key's lock: renamed away first
  // (readers stop seeing it at once), then deleted. False, removing nothing,
  // when it is no longer the entry listed: another `cache gc` removed it, or
  // a build replaced it, since `entry` was read.
  bool remove_if_unchanged(const StoreEntry& entry) const;
  // remove_if_unchanged()'s first half, for `cache gc`: the entry renamed
  // aside, its dir returned, deleted by the caller once the index no longer
  // links its wheels; nullopt when it is no longer the entry listed.
  std::optional<std::filesystem::path> set_aside_if_unchanged(const StoreEntry& entry) const;
  // Entries a rebuild replaced or a gc removed whose deletion has not come
  // (yet, or ever: a kill): their wheels may still be the index's links.
  std::vector<StoreEntry> set_aside() const;
  // Temporary dirs of publishes that never finished: their process (on this
  // host) is gone, or, written by another host, they are over an hour old.
  std::vector<std::filesystem::path> leftovers() const;
  std::filesystem::path lock_path(const CacheKey& key) const;
  std::filesystem::path lock_path(const std::string& hash) const;
  const std::filesystem::path& root() const { return root_; }

 private:
  friend class StagedEntry;
  // nullopt when `dir` holds no key.txt; a key.txt or manifest.json that is
  // not a regular file archbuild could have written is refused (exit 2).
  std::optional<StoreEntry> load(const std::filesystem::path& dir) const;
  std::filesystem::path root_;
  std::filesystem::path quarantine_;
};

// Where a publish pauses between writing its entry aside and renaming it into
// place, when ARCHBUILD_PUBLISH_PAUSE_MS is set: the tests' way to kill a
// build mid-publish (docs/TESTING.md).
void pause_for_publish_test();

// Whether a store dir's name is that of an entry a rebuild replaced or a gc
// removed, renamed aside until the index refresh after it.
bool is_set_aside_name(const std::string& name);

// The temporaries in `dir` whose names start with `prefix` and whose writer
// is gone: named PREFIX...@HOST@PID (temporary_prefix_of_this_process), their
// process on this host has exited, or another host's is over an hour old;
// a name without host and pid counts as gone.
std::vector<std::filesystem::path> dead_temporaries(const std::filesystem::path& dir, std::string_view prefix);
// ".tmp-WHAT@HOST@PID": a temporary dir or file `cache gc` can tell is this
// process's while it runs.
std::string temporary_prefix_of_this_process(std::string_view what);

}  // namespace archbuild
