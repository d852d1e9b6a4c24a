#pragma once

#include <filesystem>
#include <optional>
#include <vector>

#include "source/url_rewrite.h"

namespace archbuild {

// archbuild's config file: $ARCHBUILD_CONFIG, else
// $XDG_CONFIG_HOME/archbuild/config.toml, else ~/.config/archbuild/config.toml.
// Today it holds URL rewrites ([mirrors] "FROM" = "TO", git's insteadOf).
struct UserConfig {
  std::optional<std::filesystem::path> file;  // the file read, if any
  std::vector<UrlRewrite> mirrors;
};

// Throws UserError(bad_input) naming the file, line and key of a bad entry.
UserConfig load_user_config();

}  // namespace archbuild
