#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/compiler_launcher.h"
#include "config/user_config.h"

namespace archbuild {

// One row of archbuild's config table (ccache's habit: one table maps each
// key to its environment variable, and `archbuild config` shows each value's origin).
struct SettingSpec {
  std::string key;   // in config.toml
  std::string env;   // ARCHBUILD_...
  std::string flag;  // the command-line flag that overrides it
  std::string description;
};

const std::vector<SettingSpec>& setting_specs();
const SettingSpec* find_setting(const std::string& key);
std::string known_setting_keys();

struct SettingValue {
  std::string key;
  std::string value;
  std::string origin;  // "default", "config file PATH:LINE", "env ARCHBUILD_X", "--flag"
};

// Defaults < config file < ARCHBUILD_* environment < command-line flags.
class Settings {
 public:
  // `flags` holds the flags the user gave, by setting key; an empty value
  // counts as not given (so callers pass their option fields as they are).
  static Settings load(const std::map<std::string, std::string>& flags = {});
  const SettingValue& get(const std::string& key) const;
  const std::vector<SettingValue>& all() const { return values_; }
  const UserConfig& file() const { return config_; }
  // Typed accessors; throw UserError(bad_input) naming the key and its origin.
  std::optional<unsigned> jobs() const;
  bool offline() const;
  bool require_kernel_launch() const;
  // Repair wheels that need a library only this machine has (the portable setting).
  bool portable() const;
  // ccache's remote storage as ccache reads it: one or more space-separated
  // redis://, redis+unix:, http:// or file: URLs, each with optional
  // |attribute=value parts ccache knows; "" when unset.
  std::string compiler_cache_remote() const;
  // The compiler_launcher setting: ccache, sccache or none.
  CompilerLauncher compiler_launcher() const;
  // Where the validation venv may install test dependencies from: the
  // test_wheelhouse setting's entries (else PIP_FIND_LINKS's), each an
  // absolute dir or a URL; throws UserError(bad_input) for a missing dir of
  // the setting's (PIP_FIND_LINKS's are left out, as pip leaves them).
  std::vector<std::string> test_wheelhouses() const;
  // Every typed accessor above and below, for `archbuild config`: throws
  // the first one's UserError.
  void check() const;
  // The cache root, absolute.
  std::filesystem::path cache_dir() const;
  // cache_dir, created where it is not there yet: UserError(environment)
  // when this machine refuses it, (bad_input) when a file is in the way.
  std::filesystem::path made_cache_dir() const;
  // The recipe_path dirs, absolute, in order; throws UserError(bad_input)
  // naming an entry that is not a directory and the setting's origin.
  std::vector<std::filesystem::path> recipe_dirs() const;
  // The interpreter the python setting names, as an absolute path; throws
  // UserError(environment) naming the setting's origin when it is missing.
  std::filesystem::path python() const;

 private:
  bool flag(const std::string& key) const;  // "true"/"1", "false"/"0"/"": else bad_input
  std::vector<SettingValue> values_;
  UserConfig config_;
};

}  // namespace archbuild
