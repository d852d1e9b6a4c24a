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
  std::vector<std::string> unavailable;  // still missing after that (direct references too)
  std::string error;                     // the declared list could not be read
  bool ok() const { return unavailable.empty() && error.empty(); }
  // "" when nothing was missing; else "installed fvcore, iopath from the wheelhouse W" or
  // "fvcore declared by the wheel, not installed for PYTHON and no wheelhouse gives it: ..."
  std::string summary() const;
  nlohmann::json to_json() const;
};

// `distribution` as installed in the venv of `venv_python`; pip's output is
// appended to `log_file`.
WheelDependencies install_wheel_dependencies(const std::string& venv_python, const std::string& distribution,
                                             const TestDependencySource& source, const std::filesystem::path& log_file,
                                             const std::filesystem::path& work_dir);

}  // namespace archbuild
