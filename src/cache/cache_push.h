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

// Copies every published build of `from` that `dest` lacks into `dest`, a
// directory laid out like a cache (store/, wheels/, simple/) that several
// builders share (NFS and the like): each entry under its key's lock, written
// aside and renamed into place, as a local publish is; then DEST's index is
// regenerated under its lock. Pushers that race on the same key copy it once.
PushResult push_cache(const WheelStore& from, const std::filesystem::path& dest);

}  // namespace archbuild
