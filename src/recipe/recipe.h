#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "arch/arch_dialect.h"
#include "recipe/version_range.h"

namespace archbuild {

class Settings;

// How one version range of a package builds: argv (no shell; {source_dir},
// {wheel_dir} and {python} are substituted per argument) and environment.
struct BuildStep {
  VersionRange versions;
  std::string system;  // "setup.py" or "pyproject": for humans and the plan
  std::vector<std::string> command;
  std::map<std::string, std::string> env;
  // Removed (relative to the work tree) when the configure must be fresh:
  // builds that read no CMAKE_FRESH (PyTorch from 2.14: scikit-build-core).
  std::vector<std::string> fresh_configure_removes;
  // Python requirements installed before the build step (PEP 508 strings),
  // and files of the work tree that name more: a requirements file, or
  // pyproject.toml for its [build-system] requires (builder/build_requirements.h).
  std::vector<std::string> requires_list;
  std::vector<std::string> requires_from;
};

// [[env]]: variables for the refs in `versions` built with a toolkit in
// `cuda`, set over [build.env] in file order (PyTorch's release builds set
// some per CUDA major).
struct EnvOverlay {
  VersionRange versions;
  VersionRange cuda;
  std::map<std::string, std::string> set;
  std::string machine;  // "aarch64": only on such hosts; "" on any
};

// [[pairs]]: the refs in `versions` belong to these versions of their
// dependencies (torchvision 0.24.1 to torch 2.9.1, the official table).
struct DependencyPin {
  VersionRange versions;
  std::map<std::string, std::string> dependencies;  // "torch" -> "2.9.1"
};

// A project's own test suite, run from the source tree against the
// installed wheel during device validation (validate/project_tests.h).
// A test a recipe leaves out of its suite, and why (a known upstream failure).
struct DeselectedTest {
  std::string test;  // pytest node id, "test/test_knn.py::test_nearest[dtype0-device0]"
  std::string reason;
};

struct ProjectTests {
  std::vector<std::string> command;  // argv; {python}, {source_dir}; a leading "pytest" runs as "{python} -m pytest"
  double timeout_seconds = 1200;     // the time budget: the suite is stopped after it
  unsigned max_failed_tests = 0;     // the failure budget (kernel failures never count as tolerable)
  std::vector<std::string> required_modules;  // modules the command needs from the validating interpreter
  std::vector<DeselectedTest> deselected;     // passed to pytest as --deselect, listed in the report
  // Where and when the recipe's budget was tried on a GPU ("H200, torch
  // 2.11.0+cu130, 2026-12-02: 126 passed"); "" when it never was.
  std::string verified;
  // Failures are listed and never fail validation: a suite archbuild found
  // by itself, or a recipe budget nobody has tried on a GPU yet.
  bool report_only = false;
};

// [[system_library]] in a recipe: a library the build should take from this
// machine rather than build or download itself (PyTorch's NCCL: without one
// its build clones NCCL from GitHub, which the offline build step cannot).
struct SystemLibrary {
  std::string name;     // "NCCL"
  std::string header;   // "nccl.h"
  std::string library;  // "libnccl.so" (the unversioned name CMake's find_library needs)
  // Set when found; {include_dir} and {library_dir} are where it was.
  std::map<std::string, std::string> found_env;
  std::string missing;  // what the build does without it, and what to do
  // The wheel that ships it where the machine does not ("nvidia-nccl-cu{cuda_major}"),
  // installed before the build step, and the dir of it with include/ and lib/
  // ("nvidia/nccl"). `wheel_env` is set then too ({requirement}: "nvidia-nccl-cu13==2.28.9").
  std::string wheel;
  std::string wheel_dir;
  std::map<std::string, std::string> wheel_env;
  std::string machine;  // "aarch64": only on such hosts; "" on any
};

// [estimate]: what a build takes before one is recorded on this machine
// (builder/build_time_model.h).
struct RecipeEstimate {
  double core_hours = 0;            // at one code image
  double core_hours_per_image = 0;  // each further SASS / PTX image
  double disk_gb = 0;               // sources and build dirs
};

struct PatchRule {
  VersionRange versions;
  std::vector<std::string> files;  // relative to patches/
};

// A recipe file (recipes/NAME.toml), validated on load: docs/RECIPES.md.
struct Recipe {
  std::string name;
  std::string description;
  std::string kind;        // a recipe_kinds() name: what the package is for
  std::string repository;  // empty for the generic recipe (the user gives PATH or URL)
  // The project's name on PyPI (canonical), when its repository is a git URL:
  // `archbuild build pypi:NAME` then builds its sdist with this recipe.
  std::string pypi_name;
  std::string default_ref;
  // The project's releases this recipe knows ("2.9.1", ...): default_ref is
  // the newest, and its [[build]] ranges cover them all (a test checks).
  std::vector<std::string> releases;
  bool submodules = false;
  std::string subdirectory;  // the project's directory inside the repository ("" for its root)
  ArchDialect dialect = ArchDialect::extension;
  double job_memory_gb = 2.0;
  std::vector<std::string> depends_on;
  std::string kernel_test;  // relative to the data dir (a site recipe's: absolute, see RECIPES.md)
  // Where and when the whole recipe was proven on a GPU (built, validation
  // `checked`, its kernel test and its own tests passed); empty: not yet.
  std::string verified;
  bool keep_project_archs = false;    // do not enforce the arch list on the project's nvcc calls
  std::optional<ProjectTests> tests;  // [tests]: the project's own suite
  std::optional<RecipeEstimate> estimate;
  std::vector<BuildStep> builds;
  std::vector<EnvOverlay> env_overlays;
  std::vector<DependencyPin> pins;
  std::vector<SystemLibrary> system_libraries;
  std::vector<PatchRule> patches;
  std::filesystem::path file;
  std::string file_sha256;
  std::filesystem::path patches_dir;  // where its [[patches]] files are: the data dir's patches/, or its own dir's
  std::string origin;                 // "built-in", or the recipe_path setting's origin
  std::vector<std::filesystem::path> shadows;  // files of the same name later on the search path, not read
};

// One directory of recipes on the search path.
struct RecipeDir {
  std::filesystem::path recipes;  // *.toml
  std::filesystem::path patches;  // what their [[patches]] name
  std::string origin;             // "built-in", "recipe_path (env ARCHBUILD_RECIPE_PATH)"
};

// A recipe at one ref: the build step and patch files that apply to it.
struct ResolvedRecipe {
  const Recipe* recipe = nullptr;
  std::string ref;
  std::optional<std::vector<int>> version;
  const BuildStep* build = nullptr;
  std::vector<std::filesystem::path> patch_files;  // absolute
  std::map<std::string, std::string> pinned;       // dependency -> the version this ref belongs to
};

class RecipeBook {
 public:
  // Throws UserError(bad_input) naming the file, line and key of a bad entry.
  // `machine`: the host CPU the recipes are for ("": this one; see for_machine).
  static RecipeBook load(const std::filesystem::path& recipes_dir, const std::filesystem::path& patches_dir,
                         const std::string& machine = "");
  // The recipes of every dir, by name: the first dir holding NAME.toml wins
  // and the later ones are recorded as shadowed (not read); dependencies and
  // cycles are checked across all of them.
  static RecipeBook load_search_path(const std::vector<RecipeDir>& dirs, const std::string& machine = "");
  // The built-in recipes (the data dir's recipes/ and patches/) alone.
  static RecipeBook load_default();
  // The recipe_path setting's dirs (each one's patches in its own patches/),
  // then the built-in ones.
  static RecipeBook load_for(const Settings& settings);
  static Recipe parse_file(const std::filesystem::path& file, const std::filesystem::path& patches_dir);
  // The recipe as a host of this CPU ("x86_64", "aarch64") builds it: the
  // [[env]] and [[system_library]] entries for other hosts left out. The
  // loaders above apply it for this host.
  static Recipe for_machine(Recipe recipe, const std::string& machine);

  const std::vector<Recipe>& all() const { return recipes_; }
  const Recipe* find(const std::string& name) const;
  // The recipe whose repository is `url` by same_repository (repository_url.h);
  // null when none is, or when several are (then none is picked by itself).
  const Recipe* find_by_repository(const std::string& url) const;
  // The one recipe of the PyPI project NAME (its `pypi` key, or a
  // `pypi:NAME` repository), or none (no recipe, or two).
  const Recipe* find_by_pypi_name(const std::string& name) const;
  // Throws UserError(bad_input) when no build step covers the ref.
  ResolvedRecipe resolve(const Recipe& recipe, const std::string& ref) const;

 private:
  std::vector<Recipe> recipes_;
};

}  // namespace archbuild
