#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "doctor/fix_ladder.h"

namespace archbuild {

// The torch builds archbuild's cache at `cache_dir` publishes, with their
// install lines, newest first: a fix doctor can offer. An unreadable cache
// is no reason to stop a diagnosis: it yields none (said at -v).
std::vector<CachedTorch> cached_torch_builds(const std::filesystem::path& cache_dir);

// Those built on a `machine` CPU ("x86_64"): the only ones that install there.
std::vector<CachedTorch> built_for(const std::vector<CachedTorch>& builds, const std::string& machine);

}  // namespace archbuild
