#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/strings.h"
#include "recipe/recipe.h"
#include "source/mirror_cache.h"
#include "source/patch_apply.h"
#include "source/source_tree.h"

namespace archbuild {

class SdistFetcher;

// What `archbuild source|build X` means by X: a recipe name, a local git
// repository, a git URL (the recipe whose repository it is, else the
// generic cpp-extension recipe), or pypi:NAME==VERSION (an sdist, made a
// commit of the mirror of pypi:NAME; the recipe whose repository is
// pypi:NAME, else cpp-extension).
struct SourceTarget {
  std::string name;  // recipe name, or the repository's (project's) name
  std::string url;   // as the user or recipe gives it; pypi:NAME for an sdist
  std::string ref;   // resolved: --ref, the recipe's default, or the remote's default branch; an sdist's version
  bool submodules = true;
  const Recipe* recipe = nullptr;
  std::vector<PatchFile> patches;    // the recipe's for this ref
  std::vector<std::string> notes;    // what the user should know: "building PATH's HEAD ...", uncommitted files
  std::optional<SdistOrigin> sdist;  // set for an sdist: recorded in the manifest and the cache key
};

// A local repository without --ref builds what it has checked out (its
// branch, or the commit of a detached HEAD), and the notes name the tracked
// files with uncommitted changes, which that commit does not contain.
// Throws UserError(bad_input) when X is none of these. `recipe_option`
// (--recipe) builds a PATH, URL or sdist with a named recipe instead: a
// fork of PyTorch with the torch recipe. A URL that is a recipe's
// repository (same_repository: scheme, host case, ".git" and a trailing
// '/' aside) picks that recipe by itself, with a note; a local PATH never
// does (a note names the recipe its origin remote matches). An sdist needs
// `sdists` (it is downloaded or taken from the cache here). A URL's default
// branch is asked of where `rewriter` sends it (--mirror, the config's
// [mirrors]), as every fetch is: a host only the mirror reaches is never asked.
SourceTarget resolve_source_target(const std::string& what, const std::string& ref_option, const RecipeBook& book,
                                   const MirrorCache& mirrors, bool offline, const std::string& recipe_option = "",
                                   const SdistFetcher* sdists = nullptr, const UrlRewriter* rewriter = nullptr);

}  // namespace archbuild
