#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "recipe/recipe.h"

namespace archbuild {

// A build's Python requirements (cmake, ninja, numpy, scikit-build-core, ...):
// installed into a build venv before the build step, which then runs offline.

// The recipe's [[build]] `requires`, then what `requires_from` names in the
// work tree: a requirements file (one per line; comments, blank lines and
// pip options skipped, each option noted) or "pyproject.toml" (its
// [build-system] requires). Names in `provided` (torch, from the dependency
// env) are left out. A file that is not there is noted, not an error (older
// refs lack requirements-build.txt). Throws UserError(bad_input) naming a
// file that cannot be read.
std::vector<std::string> collect_build_requirements(const BuildStep& build, const std::filesystem::path& source_dir,
                                                    const std::vector<std::string>& provided,
                                                    std::vector<std::string>& notes);

// The normalized distribution name a PEP 508 requirement starts with
// ("nvidia-nccl-cu13" of "nvidia_nccl_cu13>=2.27").
std::string requirement_name(const std::string& requirement);

// The requirement lines of a pip requirements file (comments dropped); a
// pip option (-r, -e, --index-url) is not followed but noted. Throws
// UserError(bad_input) naming `shown` (and the `role` it plays) for a file
// that cannot be read.
void read_requirements_file(const std::filesystem::path& file, const std::string& shown, std::vector<std::string>& out,
                            std::vector<std::string>& notes, const std::string& role = "");

struct RequirementStatus {
  std::string requirement;  // as written
  std::string name;         // normalized
  bool applies = true;      // its environment marker holds here
  std::optional<std::string> installed;
  bool satisfied = false;
};

// Asks `python` which requirements it satisfies (recipes/frontends/
// build_requirements.py). Throws UserError: bad_input for a malformed
// requirement, environment when the probe cannot run.
std::vector<RequirementStatus> probe_build_requirements(const std::string& python,
                                                        const std::vector<std::string>& requirements);

struct BuildRequirementsEnv {
  std::string python;                           // the interpreter the build runs with
  std::map<std::string, std::string> versions;  // "cmake" -> "3.31.2": what the build ran with (a cache key input)
  std::vector<RequirementStatus> status;        // after installing
  std::vector<std::string> installed_now;       // what pip installed this time
  std::string description;                      // one line for the terminal
};

// Nothing to install when `python` satisfies them all. Otherwise a layered
// venv at `env_dir` over `python` gets the missing ones from pip's index
// (the user's pip configuration), reused while the list is the same; with
// `offline`, refused naming them and the command that installs them.
BuildRequirementsEnv ensure_build_requirements(const std::string& python, const std::filesystem::path& env_dir,
                                               const std::vector<std::string>& requirements, bool offline);

}  // namespace archbuild
