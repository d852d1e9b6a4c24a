#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace archbuild {

// One [mirrors] entry as written; source/ turns these into UrlRewrite rules,
// so config stays below source.
struct MirrorEntry {
  std::string from;
  std::string to;
};

// archbuild's config file: $ARCHBUILD_CONFIG, else
// $XDG_CONFIG_HOME/archbuild/config.toml, else ~/.config/archbuild/config.toml.
// It holds settings (see settings.h) and URL rewrites ([mirrors] "FROM" = "TO").
struct UserConfig {
  std::optional<std::filesystem::path> file;  // the file read, if any
  std::vector<MirrorEntry> mirrors;
  struct Entry {
    std::string value;
    int line = 0;
  };
  std::map<std::string, Entry> values;  // top-level settings, as text
};

// Throws UserError(bad_input) naming the file, line and key of a bad entry.
UserConfig load_user_config();

}  // namespace archbuild
