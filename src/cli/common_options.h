#pragma once

#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace archbuild {

// The options several commands share, declared in one place so that their
// names, help and meaning agree everywhere. Each fills a field the command
// owns; settings flags reach config/settings through `setting_flags()`.
void add_cache_dir_option(CLI::App& app, std::string& cache_dir);
void add_python_option(CLI::App& app, std::string& python, const std::string& help);
void add_mirror_option(CLI::App& app, std::vector<std::string>& mirrors);
void add_offline_flag(CLI::App& app, bool& offline);
void add_json_flag(CLI::App& app, bool& json, const std::string& help = "Print JSON");

// The settings a command line can override, by setting key (an empty value
// means "not given", so commands pass their fields as they are).
struct SettingFlags {
  std::string cache_dir, python, jobs, compiler_launcher, compiler_cache_remote;
  bool offline = false;
  std::map<std::string, std::string> by_key() const;
};

}  // namespace archbuild
