#include "cache/cache_verify.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "cache/cache_index.h"
#include "cache/store_maintenance.h"
#include "cache/wheel_store.h"
#include "core/cache_layout.h"
#include "core/error.h"
#include "core/file_lock.h"

namespace archbuild {

size_t LocalVerifyResult::bad_entries() const {
  return static_cast<size_t>(std::count_if(entries.begin(), entries.end(),
                                           [](const VerifiedEntry& entry) { return !entry.problems.empty(); }));
}

LocalVerifyResult verify_local_cache(const std::filesystem::path& cache_dir, const std::vector<Ed25519Key>& trusted,
                                     bool require_signature,
                                     const std::function<void(const VerifiedEntry&)>& on_entry) {
  std::error_code missing;
  if (!std::filesystem::is_directory(cache_dir, missing))
    fail_bad_input("no cache at " + cache_dir.string() + " (nothing to verify)");
  WheelStore store(cache_dir);
  LocalVerifyResult result;
  for (const auto& entry : store.entries()) {
    VerifiedEntry verified{entry.hash, entry.wheels.empty() ? "" : entry.wheels.front().filename().string(), {}};
    try {
      verified.problems = verify_store_entry(entry);
      for (auto& problem : entry_provenance_problems(entry, trusted, require_signature))
        verified.problems.push_back(std::move(problem));
    } catch (const nlohmann::json::exception& error) {
      // A field of another type somewhere in the entry's JSON: this entry is bad, the others are still checked.
      verified.problems.push_back("a JSON file of the entry holds a field of the wrong type (" +
                                  std::string(error.what()) + ")");
    }
    if (on_entry) on_entry(verified);
    result.entries.push_back(std::move(verified));
  }
  {
    FileLock lock(CacheLayout(cache_dir).index_lock());  // a consistent view, not one mid-refresh
    result.index_problems = verify_cache_index(cache_dir, store);
  }
  result.unfinished_publishes = store.leftovers();
  result.index_dir = cache_index_paths(cache_dir).simple_dir;
  return result;
}

}  // namespace archbuild
