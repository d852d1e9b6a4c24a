#include "config/user_config.h"

#include <cstdlib>

#include <toml++/toml.h>

#include "config/settings.h"
#include "config/toml_file.h"
#include "core/error.h"

namespace archbuild {

namespace {
std::optional<std::filesystem::path> config_path() {
  if (const char* env = std::getenv("ARCHBUILD_CONFIG"); env && *env) return std::filesystem::path(env);
  std::filesystem::path base;
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg)
    base = xdg;
  else if (const char* home = std::getenv("HOME"); home && *home)
    base = std::filesystem::path(home) / ".config";
  else
    return std::nullopt;
  auto path = base / "archbuild" / "config.toml";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  return path;
}
}  // namespace

UserConfig load_user_config() {
  UserConfig config;
  config.file = config_path();
  if (!config.file) return config;
  std::error_code ec;
  if (!std::filesystem::exists(*config.file, ec))
    fail_bad_input("ARCHBUILD_CONFIG=" + config.file->string() + " does not exist");
  // A FIFO would block the read forever, a directory would read as empty.
  if (!std::filesystem::is_regular_file(*config.file, ec))
    fail_bad_input("config file " + config.file->string() + " is not a regular file");
  toml::table root;
  try {
    root = parse_toml_file(*config.file);
  } catch (const toml::parse_error& e) {
    fail_bad_input(config.file->string() + ":" + std::to_string(e.source().begin.line) + ": " +
                   std::string(e.description()));
  }
  auto bad = [&](const toml::source_region& where, const std::string& key, const std::string& why) {
    fail_bad_input(config.file->string() + ":" + std::to_string(where.begin.line) + ": key '" + key + "': " + why);
  };
  for (auto& [key, value] : root) {
    std::string name(key.str());
    if (name != "mirrors") {
      if (!find_setting(name)) bad(value.source(), name, "unknown key (known: " + known_setting_keys() + ", mirrors)");
      std::string text;
      if (auto s = value.value<std::string>())
        text = *s;
      else if (auto i = value.value<int64_t>())
        text = std::to_string(*i);
      else if (auto b = value.value<bool>())
        text = *b ? "true" : "false";
      else
        bad(value.source(), name, "must be a string, integer or boolean");
      config.values[name] = {text, static_cast<int>(value.source().begin.line)};
      continue;
    }
    auto* table = value.as_table();
    if (!table) bad(value.source(), "mirrors", "must be a table of \"FROM\" = \"TO\"");
    for (auto& [from, to] : *table) {
      auto text = to.value<std::string>();
      if (!text) bad(to.source(), "mirrors." + std::string(from.str()), "must be a string URL prefix");
      config.mirrors.push_back({std::string(from.str()), *text});
    }
  }
  return config;
}

}  // namespace archbuild
