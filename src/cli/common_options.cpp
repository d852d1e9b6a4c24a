#include "cli/common_options.h"

namespace archbuild {

void add_cache_dir_option(CLI::App& app, std::string& cache_dir) {
  app.add_option("--cache-dir", cache_dir,
                 "archbuild's cache (default: the cache_dir setting, see `archbuild config`)");
}

void add_python_option(CLI::App& app, std::string& python, const std::string& help) {
  app.add_option("--python", python, help + " (default: the python setting)");
}

void add_mirror_option(CLI::App& app, std::vector<std::string>& mirrors) {
  app.add_option("--mirror", mirrors, "URL rewrite FROM=TO, like git's insteadOf (repeatable)");
}

void add_offline_flag(CLI::App& app, bool& offline) {
  app.add_flag("--offline", offline, "Never fetch: use the mirrors as they are (the offline setting)");
}

void add_json_flag(CLI::App& app, bool& json, const std::string& help) { app.add_flag("--json", json, help); }

std::map<std::string, std::string> SettingFlags::by_key() const {
  return {{"cache_dir", cache_dir},
          {"python", python},
          {"jobs", jobs},
          {"compiler_launcher", compiler_launcher},
          {"compiler_cache_remote", compiler_cache_remote},
          {"offline", offline ? "true" : ""}};
}

}  // namespace archbuild
