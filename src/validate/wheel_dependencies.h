#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "validate/test_dependencies.h"

namespace archbuild {

// A wheel's runtime dependencies in a validation venv: what `pip install
// WHEEL` would fetch on a node (its Requires-Dist the validating interpreter
// has no distribution of: detectron2's fvcore), installed from the same
// sources as test dependencies (wheelhouses; pip's index when the network
// is allowed), so the wheel imports as it would there. The wheel itself is
// installed without dependencies first: the interpreter's torch stays the
// one it is tested against.
struct WheelDependencies {
  bool ran = false;
  std::vector<std::string> missing;         // declared, not in the interpreter
  std::vector<std::string> other_versions;  // met by another version than asked: left alone
  // Missing, declared as `name @ URL`: never fetched (names only: a URL may hold a token).
  std::vector<std::string> direct_references;
  TestDependencyInstall install;         // what was installed for `missing`
  std::vector<std::string> unavailable;  // tried, and still missing after that
  std::vector<std::string> not_tried;    // past the most tried, or the time given
  std::string error;                     // the declared list could not be read
  bool ok() const { return unavailable.empty() && not_tried.empty() && direct_references.empty() && error.empty(); }
  // "" when nothing was missing; else "installed its dependencies fvcore, iopath from the wheelhouse W",
  // "fvcore (a dependency the wheel declares) is not installed for the validating interpreter: ...".
  std::string summary() const;
  nlohmann::json to_json() const;
};

// The pins it writes into `work_dir` for pip's -c.
inline constexpr const char* kWheelDependencyConstraints = "wheel-dependencies-constraints.txt";

// `distribution` as installed in the venv of `venv_python`; pip's output is
// appended to `log_file`. Every distribution the interpreter has is pinned
// (pip's -c): a dependency that needs another torch stays unavailable rather
// than shadow the one the wheel is tested against. At most 64 are tried, in
// at most 10 minutes.
WheelDependencies install_wheel_dependencies(const std::string& venv_python, const std::string& distribution,
                                             const TestDependencySource& source, const std::filesystem::path& log_file,
                                             const std::filesystem::path& work_dir);

}  // namespace archbuild
