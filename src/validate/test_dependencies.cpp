#include "validate/test_dependencies.h"

#include <algorithm>
#include <array>
#include <chrono>

#include "builder/build_requirements.h"
#include "config/toml_file.h"
#include "core/error.h"
#include "core/regular_file.h"
#include "core/secrets.h"
#include "core/strings.h"
#include "process/run_process.h"

namespace archbuild {

std::string TestDependencySource::describe() const {
  std::vector<std::string> parts;
  for (const auto& link : find_links) parts.push_back("the wheelhouse " + link);
  if (index) parts.push_back("pip's index");
  // A wheelhouse URL may carry a user and password: never in a report.
  return secrets::scrub(parts.empty() ? "nowhere (no wheelhouse, no network)" : join(parts, " and "));
}

namespace {

constexpr std::array kTestExtras = {"test", "tests", "testing", "dev"};

void add_once(std::vector<std::string>& list, const std::string& requirement) {
  if (std::find(list.begin(), list.end(), requirement) == list.end()) list.push_back(requirement);
}

void from_pyproject_extras(const std::filesystem::path& project_dir, DeclaredTestRequirements& declared) {
  const auto file = project_dir / "pyproject.toml";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) return;
  toml::table root;
  try {
    root = parse_toml_file(file);
  } catch (const std::exception& error) {
    declared.notes.push_back("pyproject.toml not read: " + std::string(error.what()));
    return;
  }
  const auto* extras = root["project"]["optional-dependencies"].as_table();
  if (!extras) return;
  for (const auto* extra : kTestExtras) {
    const auto* list = (*extras)[extra].as_array();
    if (!list) continue;
    declared.origins.push_back(std::string("pyproject.toml [project.optional-dependencies] ") + extra);
    for (const auto& item : *list)
      if (auto value = item.value<std::string>()) add_once(declared.requirements, *value);
  }
}

// requirements-test.txt, test-requirements.txt, test_reqs.txt; in requirements/ any test*.txt.
bool names_test_requirements(const std::string& file_name, bool in_requirements_dir) {
  const auto name = to_lower(file_name);
  return name.ends_with(".txt") && name.find("test") != std::string::npos &&
         (in_requirements_dir || name.find("requirement") != std::string::npos ||
          name.find("reqs") != std::string::npos);
}

void from_requirements_files(const std::filesystem::path& project_dir, DeclaredTestRequirements& declared) {
  std::vector<std::filesystem::path> files;  // the top's, then requirements/'s, each dir's sorted
  std::error_code ec;
  for (const auto& dir : {project_dir, project_dir / "requirements"}) {
    const auto first = files.size();
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
      if (entry.is_regular_file(ec) && names_test_requirements(entry.path().filename().string(), dir != project_dir))
        files.push_back(entry.path());
    std::sort(files.begin() + static_cast<std::ptrdiff_t>(first), files.end());
  }
  for (const auto& file : files) {
    const auto shown = file.lexically_relative(project_dir).string();
    try {
      std::vector<std::string> found;
      read_requirements_file(file, shown, found, declared.notes);
      declared.origins.push_back(shown);
      for (const auto& requirement : found) add_once(declared.requirements, requirement);
    } catch (const UserError& error) {
      declared.notes.push_back(error.what());
    }
  }
}

}  // namespace

DeclaredTestRequirements declared_test_requirements(const std::filesystem::path& project_dir) {
  DeclaredTestRequirements declared;
  from_pyproject_extras(project_dir, declared);
  from_requirements_files(project_dir, declared);
  return declared;
}

std::vector<std::string> distributions_for_modules(const std::vector<std::string>& modules) {
  // Modules whose distribution is named otherwise, as the usual test dependencies have them.
  static const std::map<std::string, std::string> kNamedOtherwise = {{"yaml", "PyYAML"},
                                                                     {"cv2", "opencv-python"},
                                                                     {"sklearn", "scikit-learn"},
                                                                     {"PIL", "Pillow"},
                                                                     {"skimage", "scikit-image"},
                                                                     {"attr", "attrs"},
                                                                     {"google.protobuf", "protobuf"},
                                                                     {"Crypto", "pycryptodome"},
                                                                     {"dateutil", "python-dateutil"}};
  std::vector<std::string> names;
  for (const auto& module : modules) {
    auto known = kNamedOtherwise.find(module);
    add_once(names, known == kNamedOtherwise.end() ? module : known->second);
  }
  return names;
}

nlohmann::json TestDependencyInstall::to_json() const {
  return {{"source", source},           {"from", origins}, {"installed", installed},
          {"unavailable", unavailable}, {"notes", notes},  {"seconds", seconds}};
}

std::string TestDependencyInstall::summary() const {
  std::string text;
  if (!installed.empty()) text = "installed for the tests from " + source + ": " + join(installed, ", ");
  if (!unavailable.empty())
    text += std::string(text.empty() ? "" : "; ") + "not in " + source + ": " + join(unavailable, ", ");
  return text;
}

namespace {

ProcessResult pip_install(const std::string& venv_python, const std::vector<std::string>& requirements,
                          const TestDependencySource& source, const std::filesystem::path& log_file,
                          const std::filesystem::path& work_dir, const std::vector<std::string>& pip_options,
                          std::chrono::milliseconds timeout) {
  std::vector<std::string> argv = {
      venv_python,     "-m", "pip", "install", "--disable-pip-version-check", "--no-warn-script-location",
      "--no-cache-dir"};
  if (!source.index) argv.push_back("--no-index");
  for (const auto& link : source.find_links) argv.insert(argv.end(), {"--find-links", link});
  argv.insert(argv.end(), pip_options.begin(), pip_options.end());
  argv.insert(argv.end(), requirements.begin(), requirements.end());
  ProcessOptions options;
  options.working_dir = work_dir;
  options.env_overrides = {{"PIP_CONFIG_FILE", "/dev/null"}, {"PIP_FIND_LINKS", std::nullopt}};
  options.timeout = timeout;
  auto result = run_process(argv, options);
  std::string old;
  (void)read_regular_file(log_file, 64 << 20, old);
  // (a wheelhouse URL's user and password never reach the log)
  write_whole_file(log_file, old + secrets::scrub("$ " + join(argv, " ") + "\n" + result.out + result.err));
  return result;
}

}  // namespace

void install_test_dependencies(const std::string& venv_python, const std::vector<std::string>& requirements,
                               const TestDependencySource& source, const std::filesystem::path& log_file,
                               const std::filesystem::path& work_dir, TestDependencyInstall& install,
                               const std::vector<std::string>& pip_options,
                               std::optional<std::chrono::steady_clock::time_point> deadline) {
  if (requirements.empty() || !source.any()) return;
  install.source = source.describe();
  const auto started = std::chrono::steady_clock::now();
  // Each pip call gets 10 minutes, or what is left before the deadline.
  const auto time_left = [&]() -> std::optional<std::chrono::milliseconds> {
    constexpr std::chrono::milliseconds most = std::chrono::minutes(10);
    if (!deadline) return most;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline -
                                                                            std::chrono::steady_clock::now());
    if (left <= std::chrono::milliseconds(0)) return std::nullopt;
    return std::min(most, left);
  };
  const auto install_all = [&](const std::vector<std::string>& some) {
    const auto timeout = time_left();
    return timeout && pip_install(venv_python, some, source, log_file, work_dir, pip_options, *timeout).succeeded();
  };
  if (install_all(requirements)) {
    install.installed.insert(install.installed.end(), requirements.begin(), requirements.end());
  } else {
    // pip refuses the whole set for one missing requirement: one by one names it
    for (const auto& requirement : requirements)
      (install_all({requirement}) ? install.installed : install.unavailable).push_back(requirement);
  }
  install.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

}  // namespace archbuild
