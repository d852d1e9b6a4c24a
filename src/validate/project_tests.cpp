#include "validate/project_tests.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>

#include "core/error.h"
#include "core/regular_file.h"
#include "core/strings.h"
#include "process/run_process.h"
#include "validate/python_crash.h"

namespace archbuild {

std::string to_string(FailureKind kind) {
  switch (kind) {
    case FailureKind::none: return "";
    case FailureKind::kernel: return "kernel";
    case FailureKind::environment: return "environment";
    case FailureKind::test: return "test";
    case FailureKind::setup: return "setup";
    case FailureKind::time: return "time";
  }
  return "";
}

namespace {

bool contains_any(const std::string& text, std::initializer_list<const char*> needles) {
  return std::any_of(needles.begin(), needles.end(),
                     [&](const char* needle) { return text.find(needle) != std::string::npos; });
}

}  // namespace

// "No module named 'scipy'" -> "scipy"; the top-level name of what was missing.
std::string missing_module(const std::string& message) {
  constexpr std::string_view marker = "No module named ";
  auto at = message.find(marker);
  if (at == std::string::npos) return {};
  auto rest = message.substr(at + marker.size());
  if (!rest.empty() && (rest.front() == '\'' || rest.front() == '"')) rest.erase(0, 1);
  auto end = rest.find_first_of("'\". |");
  return rest.substr(0, end);
}

FailureKind classify_failure(const std::string& message, const std::vector<std::string>& packages) {
  // The driver's and the runtime's words for code that cannot run here.
  if (contains_any(message, {"no kernel image is available", "CUDA error", "cudaError", "CUDA_ERROR",
                             "illegal memory access", "invalid device function", "device-side assert",
                             "unspecified launch failure", "misaligned address", "PTX JIT"}))
    return contains_any(message,
                        {"CUDA driver version is insufficient", "no CUDA-capable device", "CUDA_ERROR_NO_DEVICE"})
               ? FailureKind::environment
               : FailureKind::kernel;
  if (contains_any(message, {"Found no NVIDIA driver", "No CUDA GPUs are available", "no CUDA-capable device",
                             "Torch not compiled with CUDA"}))
    return FailureKind::environment;
  auto missing = missing_module(message);
  if (!missing.empty()) {
    // A wheel that cannot import its own modules is broken; anything else is a
    // test dependency this interpreter lacks.
    for (const auto& package : packages)
      if (missing == package || missing.rfind(package + ".", 0) == 0) return FailureKind::test;
    return FailureKind::environment;
  }
  return FailureKind::test;
}

nlohmann::json deselected_json(const std::vector<DeselectedTest>& tests) {
  auto list = nlohmann::json::array();
  for (const auto& test : tests) list.push_back({{"test", test.test}, {"reason", test.reason}});
  return list;
}

nlohmann::json ProjectTestResult::to_json() const {
  auto list = nlohmann::json::array();
  for (const auto& failure : failures)
    list.push_back({{"test", failure.test}, {"kind", to_string(failure.kind)}, {"message", failure.message}});
  nlohmann::json json = {{"command", argv},
                         {"origin", origin},
                         {"ok", ok},
                         {"failure", to_string(failure)},
                         {"summary", summary},
                         {"passed", passed},
                         {"failed", failed},
                         {"skipped", skipped},
                         {"failures", list},
                         {"seconds", seconds},
                         {"timeout_seconds", timeout_seconds},
                         {"max_failed_tests", max_failed_tests},
                         {"report_only", report_only},
                         {"missing_modules", missing_modules},
                         {"deselected", deselected_json(deselected)}};
  if (dependencies) json["test_dependencies"] = dependencies->to_json();
  return json;
}

std::optional<ProjectTests> choose_project_tests(const Recipe* recipe, const std::string& command,
                                                 std::optional<double> timeout, std::optional<unsigned> budget,
                                                 std::string& origin) {
  std::optional<ProjectTests> tests;
  if (!command.empty()) {
    tests.emplace();
    try {
      tests->command = shell_split(command);
    } catch (const std::invalid_argument& e) {
      fail_bad_input("--test '" + command + "': " + e.what());
    }
    if (tests->command.empty()) fail_bad_input("--test names no command");
    origin = "--test";
  } else if (recipe && recipe->tests) {
    tests = recipe->tests;
    origin = "recipe " + recipe->name;
    // A budget nobody has tried on a GPU is not trusted to quarantine a wheel.
    tests->report_only = tests->verified.empty() && !budget;
  }
  if ((timeout || budget) && !tests)
    fail_bad_input(std::string(timeout ? "--test-timeout" : "--max-failed-tests") +
                   " needs tests to run: --test 'COMMAND', or a recipe with [tests]");
  if (timeout) {
    if (!std::isfinite(*timeout) || *timeout <= 0)
      fail_bad_input("--test-timeout must be a positive number of seconds");
    tests->timeout_seconds = *timeout;
  }
  if (budget) tests->max_failed_tests = *budget;
  return tests;
}

std::optional<ProjectTests> find_project_tests(const std::filesystem::path& source_dir, std::string& origin) {
  std::error_code ec;
  for (const char* name : {"tests", "test"}) {
    const auto dir = source_dir / name;
    if (std::filesystem::is_symlink(dir, ec) || !std::filesystem::is_directory(dir, ec)) continue;
    bool has_tests = false;
    // The top and one level down (tests/unit/test_x.py): enough to tell a suite from a data dir.
    for (auto it = std::filesystem::recursive_directory_iterator(
             dir, std::filesystem::directory_options::skip_permission_denied, ec);
         !ec && it != std::filesystem::recursive_directory_iterator() && !has_tests; it.increment(ec)) {
      if (it.depth() > 1) {
        it.disable_recursion_pending();
        continue;
      }
      const auto file = it->path().filename().string();
      has_tests = it->is_regular_file(ec) && file.ends_with(".py") &&
                  (file.rfind("test_", 0) == 0 || file.ends_with("_test.py"));
    }
    if (!has_tests) continue;
    ProjectTests tests;
    tests.command = {"pytest", name, "-q"};
    tests.timeout_seconds = 600;
    tests.report_only = true;
    origin = std::string("found ") + name + "/";
    return tests;
  }
  return std::nullopt;
}

std::vector<std::string> project_test_argv(const ProjectTests& tests, const std::string& venv_python,
                                           const std::filesystem::path& source_dir) {
  std::vector<std::string> argv;
  for (auto word : tests.command) {
    for (const auto& [key, value] :
         {std::pair<std::string, std::string>{"{python}", venv_python}, {"{source_dir}", source_dir.string()}})
      for (size_t at; (at = word.find(key)) != std::string::npos;) word.replace(at, key.size(), value);
    argv.push_back(std::move(word));
  }
  // The pytest on PATH would be some other interpreter's: the venv's runs it.
  if (!argv.empty() && (argv.front() == "pytest" || argv.front() == "py.test")) {
    argv.front() = "pytest";
    argv.insert(argv.begin(), {venv_python, "-m"});
  }
  if (argv.size() > 2 && argv[1] == "-m" && argv[2] == "pytest")
    for (const auto& test : tests.deselected) argv.insert(argv.end(), {"--deselect", test.test});
  return argv;
}

namespace {

bool runs_pytest(const std::vector<std::string>& argv) {
  for (size_t i = 0; i + 1 < argv.size(); ++i)
    if (argv[i] == "-m" && argv[i + 1] == "pytest") return true;
  return !argv.empty() && std::filesystem::path(argv.front()).filename() == "pytest";
}

// The modules of `names` the venv's interpreter cannot import.
std::vector<std::string> missing_modules(const std::string& python, const std::vector<std::string>& names,
                                         const std::filesystem::path& cwd) {
  if (names.empty()) return {};
  std::vector<std::string> argv = {python, "-c",
                                   "import importlib.util, sys\n"
                                   "print(' '.join(m for m in sys.argv[1:] if importlib.util.find_spec(m) is None))"};
  argv.insert(argv.end(), names.begin(), names.end());
  ProcessOptions options;
  options.working_dir = cwd;
  options.env_overrides["PYTHONSAFEPATH"] = "1";
  options.timeout = std::chrono::minutes(2);
  auto result = run_process(argv, options);
  if (!result.succeeded()) return names;
  return split_any(result.out, " \n");
}

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f s", seconds);
  return text;
}

// Reads the plugin's JSON lines into the result; false when there were none.
bool read_plugin_report(const std::filesystem::path& file, const std::vector<std::string>& packages,
                        ProjectTestResult& result, std::optional<int>& exit_status, std::vector<std::string>& setup) {
  std::ifstream in(file);
  if (!in) return false;
  std::set<std::string> failed_ids;
  std::string line;
  bool any = false;
  while (std::getline(in, line)) {
    auto record = nlohmann::json::parse(line, nullptr, false);
    if (!record.is_object()) continue;
    any = true;
    const auto event = record.value("event", "");
    if (event == "finish") {
      exit_status = record.value("exitstatus", -1);
    } else if (event == "import") {
      if (record.value("ok", false)) continue;
      if (record.contains("origin"))
        setup.push_back(record.value("package", "") + " was imported from the source tree (" +
                        record.value("origin", "") + "), not from the installed wheel");
      else
        result.failures.push_back({"import " + record.value("package", ""),
                                   classify_failure(record.value("message", ""), packages),
                                   record.value("message", "")});
    } else if (event == "test" || event == "collect") {
      const auto outcome = record.value("outcome", "");
      const auto test = record.value("test", "");
      if (outcome == "passed") {
        ++result.passed;
      } else if (outcome == "skipped") {
        ++result.skipped;
      } else if (failed_ids.insert(test).second) {  // a test failing in setup and teardown counts once
        const auto message = record.value("message", "");
        result.failures.push_back({test.empty() ? "collection" : test, classify_failure(message, packages), message});
      }
    }
  }
  result.failed = result.failures.size();
  return any;
}

}  // namespace

namespace {
ProjectTestResult run_and_judge(const ProjectTestRequest& request);
}  // namespace

namespace {

// The modules a run could not import for (this machine's fault, not the wheel's).
std::set<std::string> modules_missing_in(const ProjectTestResult& result) {
  std::set<std::string> missing(result.missing_modules.begin(), result.missing_modules.end());
  for (const auto& failure : result.failures)
    if (failure.kind == FailureKind::environment)
      if (auto name = missing_module(failure.message); !name.empty()) missing.insert(name);
  return missing;
}

// The tests' declared dependencies installed first; then, once, what a run
// could not import, and the suite run again.
ProjectTestResult run_with_dependencies(const ProjectTestRequest& request) {
  TestDependencyInstall install;
  auto declared = declared_test_requirements(request.source_dir);
  install.origins = declared.origins;
  install.notes = declared.notes;
  auto wanted = declared.requirements;
  const auto argv = project_test_argv(request.tests, request.venv_python, request.source_dir);
  auto needed = request.tests.required_modules;
  if (runs_pytest(argv)) needed.push_back("pytest");
  for (const auto& name : distributions_for_modules(missing_modules(request.venv_python, needed, request.source_dir)))
    if (std::find(wanted.begin(), wanted.end(), name) == wanted.end()) wanted.push_back(name);
  const auto work_dir = request.log_file.parent_path();
  install_test_dependencies(request.venv_python, wanted, request.dependencies, request.dependencies_log, work_dir,
                            install);
  auto result = run_and_judge(request);
  std::vector<std::string> retry;
  const auto still_missing = modules_missing_in(result);
  for (const auto& name : distributions_for_modules({still_missing.begin(), still_missing.end()}))
    if (std::find(install.installed.begin(), install.installed.end(), name) == install.installed.end() &&
        std::find(install.unavailable.begin(), install.unavailable.end(), name) == install.unavailable.end())
      retry.push_back(name);
  const auto before = install.installed.size();
  install_test_dependencies(request.venv_python, retry, request.dependencies, request.dependencies_log, work_dir,
                            install);
  if (install.installed.size() > before) result = run_and_judge(request);
  install.source = request.dependencies.describe();
  result.dependencies = install;
  return result;
}

}  // namespace

ProjectTestResult run_project_tests(const ProjectTestRequest& request) {
  auto result = request.dependencies.any() ? run_with_dependencies(request) : run_and_judge(request);
  result.deselected = request.tests.deselected;
  // What the suite could not run for: modules the venv lacks are not failures of the wheel.
  const auto missing = modules_missing_in(result);
  result.missing_modules.assign(missing.begin(), missing.end());
  if (result.dependencies && !result.dependencies->summary().empty())
    result.summary += "; " + result.dependencies->summary();
  if (!request.tests.report_only) return result;
  result.report_only = true;
  std::string why = request.origin.rfind("found ", 0) == 0
                        ? "report only: a suite archbuild found (--max-failed-tests sets a budget)"
                        : "report only: the recipe's failure budget has not been tried on a GPU";
  result.summary = why + "; " + result.summary;
  if (!result.missing_modules.empty()) result.summary += "; not run: missing " + join(result.missing_modules, ", ");
  result.ok = true;
  result.failure = FailureKind::none;
  return result;
}

namespace {
ProjectTestResult run_and_judge(const ProjectTestRequest& request) {
  ProjectTestResult result;
  result.origin = request.origin;
  result.timeout_seconds = request.tests.timeout_seconds;
  result.max_failed_tests = request.tests.max_failed_tests;
  result.argv = project_test_argv(request.tests, request.venv_python, request.source_dir);
  const bool pytest = runs_pytest(result.argv);

  auto needed = request.tests.required_modules;
  if (pytest && std::find(needed.begin(), needed.end(), "pytest") == needed.end())
    needed.insert(needed.begin(), "pytest");
  if (auto missing = missing_modules(request.venv_python, needed, request.source_dir); !missing.empty()) {
    result.failure = FailureKind::environment;
    result.missing_modules = missing;
    result.summary = "the tests need " + join(missing, ", ") +
                     ", which the validating interpreter does not have (validation never downloads): install " +
                     (missing.size() == 1 ? "it" : "them") + " into the interpreter the build uses";
    return result;
  }

  std::filesystem::remove(request.report_file);
  ProcessOptions options;
  options.working_dir = request.source_dir;
  options.env_overrides = request.env;
  options.env_overrides["PYTHONSAFEPATH"] = "1";           // the tree is not put before site-packages
  options.env_overrides["PYTHONDONTWRITEBYTECODE"] = "1";  // nor written into
  options.env_overrides["PYTHONFAULTHANDLER"] = "1";       // a test that crashes the process says where
  if (pytest) {
    // Before the user's own arguments, so theirs win where they overlap.
    options.env_overrides["PYTEST_ADDOPTS"] = "-p archbuild_pytest_report -p no:cacheprovider --import-mode=append";
    const char* inherited = std::getenv("PYTHONPATH");
    options.env_overrides["PYTHONPATH"] = request.plugin_dir.string() +
                                          (inherited && *inherited ? std::string(":") + inherited : "");
    options.env_overrides["ARCHBUILD_TEST_REPORT"] = request.report_file.string();
    options.env_overrides["ARCHBUILD_TEST_PACKAGES"] = join(request.packages, ",");
    options.env_overrides["ARCHBUILD_TEST_SOURCE_DIR"] = request.source_dir.string();
  }
  options.timeout = std::chrono::milliseconds(static_cast<long long>(request.tests.timeout_seconds * 1000));
  auto started = std::chrono::steady_clock::now();
  ProcessResult run;
  try {
    run = run_process(result.argv, options);
  } catch (const UserError& e) {  // the command's program is not there
    result.failure = FailureKind::environment;
    result.summary = e.what();
    return result;
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  write_whole_file(request.log_file, "$ (cd " + request.source_dir.string() + " && " + join(result.argv, " ") + ")\n" +
                                         run.out + run.err);

  std::optional<int> exit_status;
  std::vector<std::string> setup;
  const bool reported = pytest && read_plugin_report(request.report_file, request.packages, result, exit_status, setup);
  if (!reported) {  // not pytest, or it died before the plugin wrote: the exit status says it all
    if (!run.succeeded()) {
      const auto& text = run.err.empty() ? run.out : run.err;
      auto lines = split_any(text, "\n");
      // A crash: the innermost of the project's own files in Python's report says which test it was.
      std::string tail = python_crash_line(text, request.source_dir.string());
      if (tail.empty()) tail = lines.empty() ? "" : lines.back();
      result.failures.push_back({join(result.argv, " "), classify_failure(text, request.packages),
                                 run.describe_status() + (tail.empty() ? "" : ": " + tail)});
      result.failed = 1;
    }
  }

  size_t kernel = 0, environment = 0;
  for (const auto& failure : result.failures) {
    kernel += failure.kind == FailureKind::kernel;
    environment += failure.kind == FailureKind::environment;
  }
  std::string counts = std::to_string(result.passed) + " passed, " + std::to_string(result.failed) + " failed, " +
                       std::to_string(result.skipped) + " skipped";
  if (!reported) counts = run.succeeded() ? run.describe_status() : "failed (" + run.describe_status() + ")";
  if (run.timed_out) {
    result.failure = FailureKind::time;
    result.summary = "stopped at its time budget of " + seconds_text(request.tests.timeout_seconds) + ": " + counts +
                     " by then";
  } else if (!setup.empty()) {
    result.failure = FailureKind::setup;
    result.summary = join(setup, "; ") + ": the tests would not test the wheel";
  } else if (reported && exit_status && (*exit_status == 4 || *exit_status == 3)) {
    result.failure = FailureKind::setup;
    result.summary = "pytest " + std::string(*exit_status == 4 ? "rejected its arguments" : "failed internally") +
                     " (exit " + std::to_string(*exit_status) + "): see the log";
  } else if (reported && result.passed + result.failed == 0) {
    result.failure = FailureKind::setup;
    result.summary = "the command ran no test (" + counts + ")";
  } else if (kernel > 0) {
    result.failure = FailureKind::kernel;
    result.summary = counts + ": " + std::to_string(kernel) + " with a CUDA error, which no budget excuses";
  } else if (result.failed > request.tests.max_failed_tests) {
    result.failure = environment == result.failed ? FailureKind::environment : FailureKind::test;
    result.summary = counts + ", over the failure budget of " + std::to_string(request.tests.max_failed_tests) +
                     (reported ? "" : " (" + result.failures.front().message + ")") +
                     (result.failure == FailureKind::environment ? " (every failure is this machine's: a missing "
                                                                   "module or GPU)"
                                                                 : "");
  } else if (!reported && !run.succeeded()) {
    result.failure = result.failures.front().kind;
    result.summary = counts + (pytest ? ", and archbuild's pytest plugin reported nothing: " : ": ") +
                     result.failures.front().message;
  } else {
    result.ok = true;
    result.summary = counts + (result.failed ? " (within the failure budget of " +
                                                   std::to_string(request.tests.max_failed_tests) + ", listed below)"
                                             : "");
  }
  return result;
}

}  // namespace

}  // namespace archbuild
