#pragma once

#include <string>
#include <vector>

#include "core/strings.h"
#include "recipe/recipe.h"
#include "source/mirror_cache.h"
#include "source/patch_apply.h"

namespace archbuild {

// What `archbuild source|build X` means by X: a recipe name, a local git
// repository, or a git URL (then the generic cpp-extension recipe applies).
struct SourceTarget {
  std::string name;  // recipe name, or the repository's name
  std::string url;   // as the user or recipe gives it
  std::string ref;   // resolved: --ref, the recipe's default, or the remote's default branch
  bool submodules = true;
  const Recipe* recipe = nullptr;
  std::vector<PatchFile> patches;  // the recipe's for this ref
  std::vector<std::string> notes;  // what the user should know: "building PATH's HEAD ...", uncommitted files
};

// A local repository without --ref builds what it has checked out (its
// branch, or the commit of a detached HEAD), and the notes name the tracked
// files with uncommitted changes, which that commit does not contain.
// Throws UserError(bad_input) when X is none of the three. `recipe_option`
// (--recipe) builds a PATH or URL with a named recipe instead of the generic
// one: a fork of PyTorch with the torch recipe.
SourceTarget resolve_source_target(const std::string& what, const std::string& ref_option, const RecipeBook& book,
                                   const MirrorCache& mirrors, bool offline, const std::string& recipe_option = "");

}  // namespace archbuild
