#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "recipe/recipe.h"
#include "validate/test_dependencies.h"

namespace archbuild {

// Why a check failed, so that a wheel whose kernels do not run is told
// apart from a machine that could not test it.
enum class FailureKind {
  none,
  kernel,       // a CUDA error: no kernel image, illegal address, launch failure
  environment,  // this machine: a missing test dependency, no usable GPU or driver
  test,         // a test failed for another reason
  setup,        // the test command is wrong: no tests collected, the source tree imported instead of the wheel
  time,         // the suite ran past its time budget
};
std::string to_string(FailureKind kind);

// "No module named 'scipy.linalg'" -> "scipy": the top-level name an import missed ("" when none).
std::string missing_module(const std::string& message);

// What a failure message says about its cause (CUDA errors, import errors
// of modules other than the wheel's own packages, missing GPUs).
FailureKind classify_failure(const std::string& message, const std::vector<std::string>& packages);

struct TestFailure {
  std::string test;  // pytest node id, or the command
  FailureKind kind = FailureKind::test;
  std::string message;
};

struct ProjectTestRequest {
  ProjectTests tests;
  std::string origin;                 // "recipe NAME" or "--test"
  std::filesystem::path source_dir;   // where the suite runs
  std::string venv_python;            // the validation venv, the wheel installed in it
  std::vector<std::string> packages;  // the wheel's top-level packages: must import from the venv
  std::filesystem::path plugin_dir;   // recipes/tests/pytest (archbuild_pytest_report)
  std::filesystem::path report_file;  // JSON lines the plugin appends
  std::filesystem::path log_file;
  std::map<std::string, std::optional<std::string>> env;  // native-only JIT settings, visible devices
  // Where the venv may get the tests' dependencies (nowhere: none installed),
  // and the log of those installs.
  TestDependencySource dependencies;
  std::filesystem::path dependencies_log;
};

struct ProjectTestResult {
  std::vector<std::string> argv;  // as run
  std::string origin;
  bool ok = false;
  FailureKind failure = FailureKind::none;
  std::string summary;  // one line: "12 passed, 1 failed (within the budget of 2), 3 skipped"
  size_t passed = 0, failed = 0, skipped = 0;
  std::vector<TestFailure> failures;  // every one, tolerated or not
  double seconds = 0;
  double timeout_seconds = 0;
  unsigned max_failed_tests = 0;
  bool report_only = false;                           // listed, never failing validation
  std::vector<std::string> missing_modules;           // what tests could not run for ("scipy")
  std::optional<TestDependencyInstall> dependencies;  // what was installed for them, when a source was given
  std::vector<DeselectedTest> deselected;
  nlohmann::json to_json() const;
};

// The suite a build validates with: `command` (--test, split as a shell
// would) instead of the recipe's [tests]; `timeout` and `budget` override
// either's. Sets `origin` to "--test" or "recipe NAME". Throws
// UserError(bad_input) for a malformed command or a budget without tests.
std::optional<ProjectTests> choose_project_tests(const Recipe* recipe, const std::string& command,
                                                 std::optional<double> timeout, std::optional<unsigned> budget,
                                                 std::string& origin);

// [{"test": ID, "reason": WHY}]: a recipe's deselected tests, as reports and `recipes --json` list them.
nlohmann::json deselected_json(const std::vector<DeselectedTest>& tests);

// A suite the project carries without anyone naming it: `tests/` or `test/`
// in `source_dir` holding pytest files (test_*.py, *_test.py). Run with
// pytest, report-only (no budget), within 600 s. Sets `origin` to "found
// tests/". None when there is no such directory.
std::optional<ProjectTests> find_project_tests(const std::filesystem::path& source_dir, std::string& origin);

// The command's argv as it runs: {python} and {source_dir} substituted, a
// leading "pytest" run as the venv's `python -m pytest`.
std::vector<std::string> project_test_argv(const ProjectTests& tests, const std::string& venv_python,
                                           const std::filesystem::path& source_dir);

// Runs the project's suite from its source tree against the installed wheel:
// the tree is kept off the front of sys.path (PYTHONSAFEPATH, pytest's
// append import mode), nothing is written into it (no bytecode, no pytest
// cache), the suite is stopped at its time budget, and pytest's results come
// from archbuild's plugin line by line. Verdict: every failure is listed; the
// run passes when no kernel failed and the failures fit the budget.
ProjectTestResult run_project_tests(const ProjectTestRequest& request);

}  // namespace archbuild
