#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "cache/cache_index.h"
#include "cache/wheel_store.h"

namespace archbuild {

struct PushResult {
  std::vector<std::string> pushed;   // key hashes copied
  std::vector<std::string> present;  // already there
  CacheIndex index;                  // DEST's index after the push
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
// DEST must be archbuild's: new, empty (then claimed with the marker) or
// marked. One that holds anything else, or whose store/, wheels/, simple/,
// lock files or entries are symbolic links (or are not what archbuild writes
// there), is refused with exit 2 naming it, before anything is written.
PushResult push_cache(const WheelStore& from, const std::filesystem::path& dest);

}  // namespace archbuild
