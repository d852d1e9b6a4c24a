#pragma once

#include <filesystem>
#include <string>

namespace archbuild {

// The cache_dir setting's default (the setting itself, with its flag,
// environment variable and config key, is resolved by config/settings):
// $XDG_CACHE_HOME/archbuild or ~/.cache/archbuild.
std::string resolve_cache_dir_default();

}  // namespace archbuild
