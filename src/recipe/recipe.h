#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "arch/arch_dialect.h"
#include "recipe/version_range.h"

namespace archbuild {

// How one version range of a package builds: argv (no shell; {source_dir},
// {wheel_dir} and {python} are substituted per argument) and environment.
struct BuildStep {
  VersionRange versions;
  std::string system;  // "setup.py" or "pyproject": for humans and the plan
  std::vector<std::string> command;
  std::map<std::string, std::string> env;
};

struct PatchRule {
  VersionRange versions;
  std::vector<std::string> files;  // relative to patches/
};

// A recipe file (recipes/NAME.toml), validated on load: docs/RECIPES.md.
struct Recipe {
  std::string name;
  std::string description;
  std::string repository;  // empty for the generic recipe (the user gives PATH or URL)
  std::string default_ref;
  bool submodules = false;
  ArchDialect dialect = ArchDialect::extension;
  double job_memory_gb = 2.0;
  std::vector<std::string> depends_on;
  std::string kernel_test;          // relative to the data dir
  bool keep_project_archs = false;  // do not enforce the arch list on the project's nvcc calls
  std::vector<BuildStep> builds;
  std::vector<PatchRule> patches;
  std::filesystem::path file;
  std::string file_sha256;
};

// A recipe at one ref: the build step and patch files that apply to it.
struct ResolvedRecipe {
  const Recipe* recipe = nullptr;
  std::string ref;
  std::optional<std::vector<int>> version;
  const BuildStep* build = nullptr;
  std::vector<std::filesystem::path> patch_files;  // absolute
};

class RecipeBook {
 public:
  // Throws UserError(bad_input) naming the file, line and key of a bad entry.
  static RecipeBook load(const std::filesystem::path& recipes_dir, const std::filesystem::path& patches_dir);
  static RecipeBook load_default();
  static Recipe parse_file(const std::filesystem::path& file, const std::filesystem::path& patches_dir);

  const std::vector<Recipe>& all() const { return recipes_; }
  const Recipe* find(const std::string& name) const;
  // Throws UserError(bad_input) when no build step covers the ref.
  ResolvedRecipe resolve(const Recipe& recipe, const std::string& ref) const;

 private:
  std::vector<Recipe> recipes_;
  std::filesystem::path patches_dir_;
};

}  // namespace archbuild
