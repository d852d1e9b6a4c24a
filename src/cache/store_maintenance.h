#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cache/cache_index.h"
#include "cache/wheel_store.h"
#include "core/ed25519.h"

namespace archbuild {

// What `cache verify` finds wrong with one entry, one line per problem:
// key.txt not hashing to the entry's name, a missing or unreadable manifest,
// a wheel whose sha256 differs from the manifest's or whose RECORD fails.
std::vector<std::string> verify_store_entry(const StoreEntry& entry);

// The part of verify_store_entry that says whether the entry's wheels are the
// bytes its manifest records (no RECORD check): a missing or unreadable
// manifest, a wheel whose sha256 differs, one not listed or missing, one line
// each naming the wheel. Empty when every wheel is as published.
std::vector<std::string> wheel_digest_problems(const StoreEntry& entry);

// The entry's provenance checked against what its wheels (the sha256 its
// manifest records: verify_store_entry checks the wheels against those),
// manifest.json and variant wheels are now; see provenance_problems.
std::vector<std::string> entry_provenance_problems(const StoreEntry& entry, const std::vector<Ed25519Key>& trusted,
                                                   bool require_signature);

// What every push checks before an entry leaves this cache (to a directory,
// a bucket or a package server): verify_store_entry and the provenance
// against the files (signatures aside: the readers check those with their
// own keys), each line "HASH: problem (in DIR)". Empty when it may go.
std::vector<std::string> push_problems(const StoreEntry& entry);

// The bytes of the entry's wheels; a wheel that cannot be examined counts 0.
uintmax_t entry_wheel_bytes(const StoreEntry& entry);

// Problems of the index itself: a page naming a wheel that is not there, a
// published wheel the index does not list, a page or link that is not what
// archbuild writes (not a regular file, over 16 MiB, a link outside the
// cache, a malformed escape or digest). Pages are untrusted input: read with
// a size cap, scanned in one pass, and a target is hashed only when it is a
// regular file.
std::vector<std::string> verify_cache_index(const std::filesystem::path& cache_dir, const WheelStore& store);

// One wheel link of a PEP 503 page, href="HREF#sha256=HEX", HREF still percent-encoded.
struct IndexLink {
  std::string href, sha256;
};
// The links with a #sha256= fragment, in page order: one linear scan (no
// std::regex, whose libstdc++ matcher recurses per character).
std::vector<IndexLink> index_page_links(std::string_view page);

// The group `cache gc` keeps N of: the wheels' project names and the arch list.
std::string gc_group(const StoreEntry& entry);

// Entries beyond the newest `keep` of their group (entries are newest first).
std::vector<StoreEntry> entries_to_collect(const std::vector<StoreEntry>& entries, size_t keep);

// One entry `cache gc` chose to remove.
struct GcStep {
  StoreEntry entry;
  uintmax_t bytes = 0;  // its wheels' size, taken before removing it
  // False: another gc or a build removed or replaced it meanwhile, so it was
  // left alone (never with a dry run).
  bool removed = true;
};

struct GcResult {
  std::vector<GcStep> steps;                     // in the order of entries_to_collect
  uintmax_t freed_bytes = 0;                     // of the steps removed
  std::vector<std::filesystem::path> leftovers;  // unfinished publishes removed (or, dry run, found)
};

// `cache gc`: removes the entries beyond the newest `keep` of their group and
// the unfinished publishes, then rebuilds the index; with `dry_run`, only
// says what would go. `on_step` sees each entry as it is handled, so a long
// gc can report as it goes. Throws UserError(environment) when an unfinished
// publish cannot be removed.
GcResult collect_garbage(const std::filesystem::path& cache_dir, size_t keep, bool dry_run,
                         const std::function<void(const GcStep&)>& on_step = {});

}  // namespace archbuild
