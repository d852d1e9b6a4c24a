#pragma once

#include <string>
#include <vector>

#include "cache/cache_index.h"
#include "cache/wheel_store.h"

namespace archbuild {

// What `cache verify` finds wrong with one entry, one line per problem:
// key.txt not hashing to the entry's name, a missing or unreadable manifest,
// a wheel whose sha256 differs from the manifest's or whose RECORD fails.
std::vector<std::string> verify_store_entry(const StoreEntry& entry);

// Problems of the index itself: a page naming a wheel that is not there, a
// published wheel the index does not list.
std::vector<std::string> verify_cache_index(const std::filesystem::path& cache_dir, const WheelStore& store);

// The group `cache gc` keeps N of: the wheels' project names and the arch list.
std::string gc_group(const StoreEntry& entry);

// Entries beyond the newest `keep` of their group (entries are newest first).
std::vector<StoreEntry> entries_to_collect(const std::vector<StoreEntry>& entries, size_t keep);

}  // namespace archbuild
