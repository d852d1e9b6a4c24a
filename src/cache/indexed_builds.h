#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "cache/key_inputs.h"
#include "wheel/build_record.h"

namespace archbuild {

// A published wheel found through the cache's index, with the build record
// inside it: what a dependency lookup reads instead of the whole store.
struct IndexedBuild {
  std::filesystem::path wheel;  // the store entry's copy (store/KEY/wheels/NAME)
  BuildRecord record;
  std::filesystem::file_time_type published;  // the entry's manifest.json time

  // The host CPU it was built on (its key's host_machine): a cache shared by
  // x86-64 and aarch64 builders serves each only its own.
  std::string machine() const { return KeyInputs(record.key_inputs).host_machine(); }
};

// The builds whose wheels the cache's index lists, newest first, among the
// wheels whose local version label `label_filter` accepts ("cu130.sm90"):
// only those wheels' build records are read. A wheel without a record, or
// whose record names no store entry holding it, is left out (`cache verify`
// names it).
std::vector<IndexedBuild> indexed_builds(const std::filesystem::path& cache_dir,
                                         const std::function<bool(const std::string& label)>& label_filter);

// The builds of recipe `recipe` for toolkit `cuda` ("13.0.88") made on this
// host's CPU, newest first: what a dependency may be taken from (another
// CPU's wheel does not install here).
std::vector<IndexedBuild> host_builds(const std::filesystem::path& cache_dir, const std::string& recipe,
                                      const std::string& cuda);

// Accepts the local version labels of toolkit `cuda` ("13.0.88": "cu130.sm90").
std::function<bool(const std::string& label)> cuda_label_filter(const std::string& cuda);

}  // namespace archbuild
