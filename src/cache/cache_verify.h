#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/ed25519.h"

namespace archbuild {

// `cache verify` of a cache dir: every store entry (wheels against the
// manifest and RECORD, key.txt against the entry's name, the provenance and
// its signature), the index against the store, and the unfinished publishes
// a killed build left. The bucket's counterpart is remote/s3_cache's.
struct VerifiedEntry {
  std::string hash;
  std::string first_wheel;  // "" for an entry without a wheel
  std::vector<std::string> problems;
};

struct LocalVerifyResult {
  std::vector<VerifiedEntry> entries;
  std::vector<std::string> index_problems;
  std::vector<std::filesystem::path> unfinished_publishes;  // a warning: `cache gc` removes them
  std::filesystem::path index_dir;

  size_t bad_entries() const;
  bool ok() const { return bad_entries() == 0 && index_problems.empty(); }
};

// `on_entry` hears each entry as it is checked (a terminal shows progress).
// UserError(bad_input) when there is no cache at `cache_dir`.
LocalVerifyResult verify_local_cache(const std::filesystem::path& cache_dir, const std::vector<Ed25519Key>& trusted,
                                     bool require_signature,
                                     const std::function<void(const VerifiedEntry&)>& on_entry = {});

}  // namespace archbuild
