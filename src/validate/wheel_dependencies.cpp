#include "validate/wheel_dependencies.h"

#include <algorithm>

#include "core/data_dir.h"
#include "core/json_text.h"
#include "core/secrets.h"
#include "core/strings.h"
#include "process/run_process.h"

namespace archbuild {

namespace {

// More than this many missing is no wheel's real list: the rest are not tried
// (pip is asked once per requirement when the whole set fails), nor is any
// after this long.
constexpr size_t kMostTried = 64;
constexpr std::chrono::minutes kTimeGiven(10);

// The frontend's answer, or the reason there is none.
bool read_declared(const std::string& venv_python, const std::string& distribution, WheelDependencies& into,
                   const std::filesystem::path& constraints = {}) {
  const auto frontend = data_dir() / "recipes" / "frontends" / "wheel_dependencies.py";
  ProcessOptions options;
  options.env_overrides["PYTHONDONTWRITEBYTECODE"] = "1";
  options.timeout = std::chrono::minutes(2);
  std::vector<std::string> argv = {venv_python, frontend.string(), distribution};
  if (!constraints.empty()) argv.insert(argv.end(), {"--constraints", constraints.string()});
  const auto asked = run_process(argv, options);
  const auto answer = nlohmann::json::parse(asked.out, nullptr, /*allow_exceptions=*/false);
  if (!asked.succeeded() || !answer.is_object()) {
    into.error = "its declared dependencies could not be read (" + asked.describe_status() +
                 "): " + secrets::scrub(last_lines(asked.err.empty() ? asked.out : asked.err, 2));
    return false;
  }
  into.missing = json_strings(answer, "missing");
  into.other_versions = json_strings(answer, "other_versions");
  into.direct_references = json_strings(answer, "direct_references");
  return true;
}

}  // namespace

WheelDependencies install_wheel_dependencies(const std::string& venv_python, const std::string& distribution,
                                             const TestDependencySource& source, const std::filesystem::path& log_file,
                                             const std::filesystem::path& work_dir) {
  WheelDependencies dependencies;
  dependencies.ran = true;
  dependencies.install.source = source.describe();
  const auto constraints = work_dir / kWheelDependencyConstraints;
  if (!read_declared(venv_python, distribution, dependencies, constraints) || dependencies.missing.empty())
    return dependencies;
  const auto tried_count = std::min(dependencies.missing.size(), kMostTried);
  const std::vector<std::string> tried(dependencies.missing.begin(),
                                       dependencies.missing.begin() + static_cast<std::ptrdiff_t>(tried_count));
  install_test_dependencies(venv_python, tried, source, log_file, work_dir, dependencies.install,
                            {"-c", constraints.string()}, std::chrono::steady_clock::now() + kTimeGiven);
  // Asked again: pip may install one as another's dependency, or fail halfway.
  WheelDependencies after;
  if (!read_declared(venv_python, distribution, after)) {
    dependencies.error = after.error;
    return dependencies;
  }
  for (const auto& requirement : after.missing)
    (std::find(tried.begin(), tried.end(), requirement) != tried.end() ? dependencies.unavailable
                                                                       : dependencies.not_tried)
        .push_back(requirement);
  return dependencies;
}

std::string WheelDependencies::summary() const {
  if (!error.empty()) return error;
  std::vector<std::string> done;
  for (const auto& requirement : missing)
    if (std::find(unavailable.begin(), unavailable.end(), requirement) == unavailable.end() &&
        std::find(not_tried.begin(), not_tried.end(), requirement) == not_tried.end())
      done.push_back(requirement);
  std::vector<std::string> parts;
  if (!done.empty()) parts.push_back("installed its dependencies " + join(done, ", ") + " from " + install.source);
  const auto declared = [](const std::vector<std::string>& some) {
    return join(some, ", ") +
           (some.size() == 1 ? " (a dependency the wheel declares) is" : " (dependencies the wheel declares) are");
  };
  if (!unavailable.empty())
    parts.push_back(declared(unavailable) + " not installed for the validating interpreter: " +
                    (install.source.starts_with("nowhere")
                         ? std::string("no wheelhouse or index was given (--test-wheelhouse DIR)")
                         : install.source + " does not have " + (unavailable.size() == 1 ? "it" : "them") +
                               " in a version this interpreter's packages allow"));
  if (!direct_references.empty())
    parts.push_back(declared(direct_references) + " declared by a direct URL: not fetched");
  if (!not_tried.empty())
    parts.push_back(declared(not_tried) + " not tried (more than " + std::to_string(kMostTried) + ", or past " +
                    std::to_string(kTimeGiven.count()) + " minutes)");
  return join(parts, "; ");
}

nlohmann::json WheelDependencies::to_json() const {
  return {{"ran", ran},
          {"ok", ok()},
          {"missing", missing},
          {"other_versions", other_versions},
          {"direct_references", direct_references},
          {"install", install.to_json()},
          {"unavailable", unavailable},
          {"not_tried", not_tried},
          {"error", error},
          {"summary", summary()}};
}

}  // namespace archbuild
