#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cache/simple_index.h"
#include "cache/wheel_store.h"

namespace archbuild {

// What pip reads from a cache dir: <cache>/wheels/ (one hard link per
// published wheel: `pip install --find-links`) and <cache>/simple/ (PEP 503:
// `pip install --index-url file://<cache>/simple`).
struct CacheIndex {
  std::filesystem::path wheels_dir;
  std::filesystem::path simple_dir;
  std::vector<IndexedWheel> wheels;
  // Older entries whose wheel has the same file name as a newer one (the
  // newer wins in the index; `cache ls` still shows both).
  std::vector<std::filesystem::path> shadowed;
};

CacheIndex cache_index_paths(const std::filesystem::path& cache_dir);

// Refuses (exit 2, naming it) a cache dir's wheels/, simple/ or index.lock
// that is a symbolic link or not what archbuild writes there, and a simple/
// that is not archbuild's (check_index_dir): what refresh_cache_index would
// otherwise write or delete through. Writes nothing.
void check_cache_index_dirs(const std::filesystem::path& cache_dir);

// Rebuilds wheels/ and simple/ from the store, under <cache>/index.lock:
// links are renamed into place, pages are written aside and renamed, and
// wheels of removed entries are unlinked after the pages stop naming them,
// so a concurrent pip never sees a link to a missing file or half a page.
// It removes from wheels/ only the links it made (the files its previous
// pages linked) that no store entry publishes now, and follows no symbolic
// link (check_cache_index_dirs first). Runs after every publish and `cache gc`.
CacheIndex refresh_cache_index(const std::filesystem::path& cache_dir, const WheelStore& store);

// After the publish of one new entry: its wheels are linked and listed on
// their projects' pages (it is the newest, so it wins its file names), and
// nothing else is read or written: no store scan, no other wheel hashed, so
// the cost grows with the entry's project page, not with the store. A name
// it takes over is unlisted before its link changes, as in the full
// refresh. Falls back to refresh_cache_index where the index cannot be
// updated in place (none yet, an older layout). The digests come from the
// entry's manifest.
CacheIndex publish_to_cache_index(const std::filesystem::path& cache_dir, const WheelStore& store,
                                  const StoreEntry& entry);

// The {name}-{version}-variants.json documents (file name -> text) the index
// serves for these store variant wheels, made from the variant.json beside
// each: what `cache verify` expects to find in wheels/.
std::map<std::string, std::string> variants_documents(const std::vector<std::filesystem::path>& variant_wheels);

}  // namespace archbuild
