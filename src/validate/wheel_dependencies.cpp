#include "validate/wheel_dependencies.h"

#include <algorithm>

#include "core/data_dir.h"
#include "core/secrets.h"
#include "core/strings.h"
#include "process/run_process.h"

namespace archbuild {

namespace {

// More than this many missing is no wheel's real list: the rest are not tried
// (pip is asked once per requirement when the whole set fails).
constexpr size_t kMostTried = 64;

std::vector<std::string> strings_at(const nlohmann::json& json, const char* key) {
  std::vector<std::string> found;
  if (json.contains(key) && json[key].is_array())
    for (const auto& item : json[key])
      if (item.is_string()) found.push_back(item.get<std::string>());
  return found;
}

// The frontend's answer, or the reason there is none.
bool read_declared(const std::string& venv_python, const std::string& distribution, WheelDependencies& into) {
  const auto frontend = data_dir() / "recipes" / "frontends" / "wheel_dependencies.py";
  ProcessOptions options;
  options.env_overrides["PYTHONDONTWRITEBYTECODE"] = "1";
  options.timeout = std::chrono::minutes(2);
  const auto asked = run_process({venv_python, frontend.string(), distribution}, options);
  const auto answer = nlohmann::json::parse(asked.out, nullptr, /*allow_exceptions=*/false);
  if (!asked.succeeded() || !answer.is_object()) {
    into.error = "its declared dependencies could not be read (" + asked.describe_status() +
                 "): " + secrets::scrub(last_lines(asked.err.empty() ? asked.out : asked.err, 2));
    return false;
  }
  into.missing = strings_at(answer, "missing");
  into.other_versions = strings_at(answer, "other_versions");
  into.direct_references = strings_at(answer, "direct_references");
  return true;
}

}  // namespace

WheelDependencies install_wheel_dependencies(const std::string& venv_python, const std::string& distribution,
                                             const TestDependencySource& source, const std::filesystem::path& log_file,
                                             const std::filesystem::path& work_dir) {
  WheelDependencies dependencies;
  dependencies.ran = true;
  if (!read_declared(venv_python, distribution, dependencies)) return dependencies;
  for (const auto& name : dependencies.direct_references)
    dependencies.unavailable.push_back(name + " (a direct URL reference: not fetched)");
  if (dependencies.missing.empty()) return dependencies;
  std::vector<std::string> tried(dependencies.missing.begin(),
                                 dependencies.missing.begin() +
                                     static_cast<std::ptrdiff_t>(std::min(dependencies.missing.size(), kMostTried)));
  install_test_dependencies(venv_python, tried, source, log_file, work_dir, dependencies.install);
  // Asked again: pip may install one as another's dependency, or fail halfway.
  WheelDependencies after;
  if (!read_declared(venv_python, distribution, after)) {
    dependencies.error = after.error;
    return dependencies;
  }
  dependencies.unavailable.insert(dependencies.unavailable.end(), after.missing.begin(), after.missing.end());
  return dependencies;
}

std::string WheelDependencies::summary() const {
  if (!error.empty()) return error;
  std::vector<std::string> done;
  for (const auto& requirement : missing)
    if (std::find(unavailable.begin(), unavailable.end(), requirement) == unavailable.end())
      done.push_back(requirement);
  std::string text;
  if (!done.empty()) text = "installed its dependencies " + join(done, ", ") + " from " + install.source;
  if (!unavailable.empty())
    text += std::string(text.empty() ? "" : "; ") + join(unavailable, ", ") +
            (unavailable.size() == 1 ? " (a dependency the wheel declares) is"
                                     : " (dependencies the wheel declares) are") +
            " not installed for the validating interpreter and " +
            (install.source.empty() ? std::string("no wheelhouse or index was given (--test-wheelhouse DIR)")
                                    : install.source + " does not have " + (unavailable.size() == 1 ? "it" : "them"));
  return text;
}

nlohmann::json WheelDependencies::to_json() const {
  return {{"ran", ran},
          {"ok", ok()},
          {"missing", missing},
          {"other_versions", other_versions},
          {"install", install.to_json()},
          {"unavailable", unavailable},
          {"error", error},
          {"summary", summary()}};
}

}  // namespace archbuild
