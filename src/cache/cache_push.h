#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cache/cache_index.h"
#include "cache/wheel_store.h"

namespace archbuild {

// What became of each source entry in a push, wherever it went (a shared
// directory, a bucket).
struct PushOutcome {
  std::vector<std::string> pushed;            // key hashes copied
  std::vector<std::string> present;           // already there, every wheel its manifest's bytes
  std::vector<std::string> repaired;          // there, but a wheel was not its manifest's bytes: copied again
  std::vector<std::string> repairs;           // "HASH: what was wrong in DEST", one line per problem
  std::vector<std::string> gone_from_source;  // removed from the source (`cache gc`) after being listed
  std::vector<std::string> not_pushed;        // "HASH: problem": a source wheel unlike its manifest
};

// The source entry a push may send, read while the caller holds its lock:
// nullopt, recorded in `outcome`, when a `cache gc` removed it meanwhile
// (gone_from_source) or it fails push_problems (not_pushed).
std::optional<StoreEntry> entry_to_push(const WheelStore& from, const CacheKey& key, PushOutcome& outcome);

struct PushResult : PushOutcome {
  CacheIndex index;  // DEST's index after the push
};

// The file that makes a directory an archbuild shared cache. Written first
// into the new or empty directory a push is given, before anything else.
inline constexpr const char* kSharedCacheMarker = ".archbuild-cache";

// Copies every published build of `from` that `dest` lacks into `dest`, a
// directory laid out like a cache (store/, wheels/, simple/) that several
// builders share (NFS and the like): each entry under its key's lock, written
// aside and renamed into place, as a local publish is; then DEST's index is
// regenerated under its lock. Pushers that race on the same key copy it once.
//
// An entry counts as in DEST only when DEST's wheels hash to what DEST's
// manifest records; one that does not is copied again (`repaired`). A
// source entry is copied only when its own wheels match its manifest, and
// one a `cache gc` of the source removes meanwhile is skipped
// (`gone_from_source`). However the push ends, a full disk included, DEST's
// index is rebuilt from what DEST's store holds.
//
// DEST must be archbuild's: new, empty (then claimed with the marker) or
// marked. One that holds anything else, or whose store/, wheels/, simple/,
// lock files or entries are symbolic links (or are not what archbuild writes
// there), is refused with exit 2 naming it, before anything is written.
PushResult push_cache(const WheelStore& from, const std::filesystem::path& dest);

}  // namespace archbuild
