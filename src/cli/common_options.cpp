#include "cli/common_options.h"

#include <cmath>
#include <cstdlib>

#include "config/setting_names.h"

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

void add_require_kernel_launch_flag(CLI::App& app, bool& required) {
  app.add_flag("--require-kernel-launch", required,
               "Refuse a CUDA wheel none of whose own kernels launched in the device checks (the "
               "require_kernel_launch setting; default: such a wheel counts as `loaded`, not `launched`)");
}

void add_portable_flag(CLI::App& app, bool& portable) {
  app.add_flag("--portable", portable,
               "Bundle the libraries the wheel needs that only this machine has, as auditwheel repair does "
               "(torch's, CUDA's and the driver's left to their own wheels), and tag it manylinux (the portable "
               "setting; default: such a wheel fails validation)");
}

void add_recipe_path_option(CLI::App& app, std::string& recipe_path) {
  app.add_option("--recipe-path", recipe_path,
                 "':'-separated dirs of site recipes, searched before the built-in ones (the recipe_path setting)");
}

void add_json_flag(CLI::App& app, bool& json, const std::string& help) { app.add_flag("--json", json, help); }

std::map<std::string, std::string> SettingFlags::by_key() const {
  return {{setting_name::cache_dir, cache_dir},
          {setting_name::python, python},
          {setting_name::jobs, jobs},
          {setting_name::compiler_launcher, compiler_launcher},
          {setting_name::compiler_cache_remote, compiler_cache_remote},
          {setting_name::compile_cluster, compile_cluster},
          {setting_name::compile_cluster_token_file, compile_cluster_token_file},
          {setting_name::recipe_path, recipe_path},
          {setting_name::signing_key, signing_key},
          {"offline", offline ? "true" : ""},
          {"require_kernel_launch", require_kernel_launch ? "true" : ""},
          {setting_name::portable, portable ? "true" : ""}};
}

void add_test_options(CLI::App& app, TestOptions& tests) {
  app.add_option("--test", tests.command,
                 "The project's tests, run from its source tree against the installed wheel on the GPU "
                 "(e.g. 'pytest test/test_ops.py -k cuda'; default: the recipe's [tests])");
  app.add_option("--test-timeout", tests.timeout_seconds, "Time budget of the tests in seconds (default 1200)")
      ->check(CLI::PositiveNumber)
      ->check(CLI::Validator(
          [](const std::string& text) {
            // CLI::PositiveNumber lets "nan" and "inf" through
            const double value = std::strtod(text.c_str(), nullptr);
            return std::isfinite(value) ? std::string() : "'" + text + "' is not a finite number of seconds";
          },
          "SECONDS"));
  app.add_option("--test-wheelhouse", tests.wheelhouse,
                 "Install the project's test dependencies into the validation venv from these wheels (a dir or "
                 "URL, pip --find-links; the test_wheelhouse setting; default: PIP_FIND_LINKS, else none)");
  app.add_option("--max-failed-tests", tests.max_failed_tests,
                 "Failures the tests may have and still pass, listed in the report (default 0; a CUDA error "
                 "never counts as tolerable)")
      ->check(CLI::NonNegativeNumber);
}

std::optional<double> TestOptions::timeout() const {
  return timeout_seconds > 0 ? std::optional<double>(timeout_seconds) : std::nullopt;
}

std::optional<unsigned> TestOptions::budget() const {
  return max_failed_tests >= 0 ? std::optional<unsigned>(static_cast<unsigned>(max_failed_tests)) : std::nullopt;
}

}  // namespace archbuild
