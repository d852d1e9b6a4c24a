#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace archbuild {

// Where the validation venv may get a project's test dependencies from:
// wheelhouses (the test_wheelhouse setting, PIP_FIND_LINKS) and, when the
// network is allowed, pip's index. Neither: nothing is installed (validation
// never downloads on its own).
struct TestDependencySource {
  std::vector<std::string> find_links;  // dirs or URLs of wheels
  bool index = false;                   // pip's index may be used
  bool any() const { return index || !find_links.empty(); }
  std::string describe() const;  // "the wheelhouse /srv/wheels", "pip's index"
};

// What the project says its tests need: [project.optional-dependencies]
// test / tests / testing / dev of its pyproject.toml, and requirements files
// named for tests (requirements-test.txt, test-requirements.txt,
// requirements/test*.txt, ...). Unreadable files become notes.
struct DeclaredTestRequirements {
  std::vector<std::string> requirements;  // PEP 508 strings, in order, once each
  std::vector<std::string> origins;  // "pyproject.toml [project.optional-dependencies] test", "requirements-test.txt"
  std::vector<std::string> notes;
};
DeclaredTestRequirements declared_test_requirements(const std::filesystem::path& project_dir);

// The distributions that provide modules a test could not import
// ("yaml" -> "PyYAML", "cv2" -> "opencv-python"; otherwise the module's own name).
std::vector<std::string> distributions_for_modules(const std::vector<std::string>& modules);

// What was installed into the validation venv for the tests.
struct TestDependencyInstall {
  std::string source;                    // TestDependencySource::describe()
  std::vector<std::string> origins;      // where the requirements came from
  std::vector<std::string> installed;    // requirements pip installed
  std::vector<std::string> unavailable;  // requirements the source does not have
  std::vector<std::string> notes;
  double seconds = 0;
  nlohmann::json to_json() const;
  std::string summary() const;  // "installed for the tests from the wheelhouse D: pytest, expecttest"
};

// Installs `requirements` into the venv of `venv_python` from `source`
// (all at once, then one by one when pip refuses the set, to name what is
// missing); the output goes to `log_file` (appended). `pip_options` go to
// every pip call (`-c FILE`); past `deadline` none is started, and what was
// left is unavailable.
void install_test_dependencies(const std::string& venv_python, const std::vector<std::string>& requirements,
                               const TestDependencySource& source, const std::filesystem::path& log_file,
                               const std::filesystem::path& work_dir, TestDependencyInstall& install,
                               const std::vector<std::string>& pip_options = {},
                               std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);

}  // namespace archbuild
