#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "recipe/recipe.h"

namespace archbuild {

// Where a recipe that depends on others (an extension on torch) gets them.
struct DependencyRequest {
  const Recipe* recipe = nullptr;
  std::string python;                         // the interpreter asked for (--python / setting)
  std::filesystem::path env_dir;              // where a build venv goes (<out>/build-env)
  bool use_installed = false;                 // --use-installed-torch: the interpreter's own torch
  std::vector<std::filesystem::path> wheels;  // --torch-wheel, or the dependencies' wheels from the cache
};

struct DependencyEnv {
  std::string python;                                // the interpreter the build runs with
  std::map<std::string, std::string> built_against;  // "torch" -> the wheel and its sha256 (a cache key input)
  std::map<std::string, std::string> versions;       // "torch" -> "2.9.1+cu130.sm90": the distributions' versions
  // The ones taken from this cache (not --torch-wheel, not the interpreter's):
  // its index serves them, so the install line pins them.
  std::map<std::string, std::string> from_cache;
  std::string description;  // one line for the terminal
};

// Nothing to do for a recipe without dependencies. With `use_installed`, the
// interpreter's torch is checked (it must import) and recorded. Otherwise a
// build venv gets the given wheels (pip --no-deps --no-index) on top of the
// interpreter's site-packages (setuptools, ninja, torch's own dependencies),
// reused while the wheels are the same. Throws UserError naming what failed.
DependencyEnv prepare_dependency_env(const DependencyRequest& request);

struct InstalledTorch {
  std::string version;  // "2.11.0+cu130"
  std::string cuda;     // "13.0", "none"
  std::string describe() const { return "torch " + version + " (CUDA " + cuda + ")"; }
};

// The torch the interpreter would import (read from its version.py), or throws.
InstalledTorch read_installed_torch(const std::string& python);

// The version of the distribution `name` (PyPI's spelling) `python` has
// installed, or nothing (not installed, or the interpreter cannot say).
std::optional<std::string> installed_distribution_version(const std::string& python, const std::string& name);

// What a build records as built against (a key input) for a dependency an
// interpreter has installed: "torch 2.11.0+cu130 (CUDA 13.0) installed in
// PYTHON", "torch-scatter 2.1.2 installed in PYTHON".
inline constexpr std::string_view kInstalledIn = " installed in ";
inline std::string installed_line(const std::string& what, const std::string& python) {
  return what + std::string(kInstalledIn) + python;
}
inline std::string installed_torch_line(const InstalledTorch& torch, const std::string& python) {
  return installed_line(torch.describe(), python);
}
// Whether a recorded built-against line names an interpreter's copy (not a wheel).
inline bool names_installed(const std::string& built_against) {
  return built_against.find(kInstalledIn) != std::string::npos;
}

// "torch 2.11.0+cu130 (CUDA 13.0)" as the interpreter imports it, or throws.
std::string probe_installed_torch(const std::string& python);

}  // namespace archbuild
