#pragma once

#include <filesystem>
#include <string>

namespace archbuild {

// archbuild's cache root: --cache-dir, else $ARCHBUILD_CACHE_DIR, else
// $XDG_CACHE_HOME/archbuild, else ~/.cache/archbuild.
std::filesystem::path resolve_cache_dir(const std::string& option);
// Without --cache-dir and $ARCHBUILD_CACHE_DIR: $XDG_CACHE_HOME/archbuild or ~/.cache/archbuild.
std::string resolve_cache_dir_default();

}  // namespace archbuild
