#pragma once

#include <map>
#include <optional>
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
void add_require_kernel_launch_flag(CLI::App& app, bool& required);
void add_portable_flag(CLI::App& app, bool& portable);
void add_recipe_path_option(CLI::App& app, std::string& recipe_path);
void add_json_flag(CLI::App& app, bool& json, const std::string& help = "Print JSON");

// --test, --test-timeout, --max-failed-tests: the project's own tests that
// device validation runs (validate/project_tests.h).
struct TestOptions {
  std::string command;
  std::string wheelhouse;      // --test-wheelhouse: the test_wheelhouse setting
  double timeout_seconds = 0;  // 0: not given
  int max_failed_tests = -1;   // -1: not given
  std::optional<double> timeout() const;
  std::optional<unsigned> budget() const;
};
void add_test_options(CLI::App& app, TestOptions& tests);

// The settings a command line can override, by setting key (an empty value
// means "not given", so commands pass their fields as they are).
struct SettingFlags {
  std::string cache_dir, python, jobs, compiler_launcher, compiler_cache_remote, recipe_path, signing_key;
  std::string compile_cluster, compile_cluster_token_file;
  bool offline = false, require_kernel_launch = false, portable = false;
  std::map<std::string, std::string> by_key() const;
};

}  // namespace archbuild
