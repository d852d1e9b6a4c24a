#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/strings.h"
#include "recipe/recipe.h"
#include "source/mirror_cache.h"
#include "source/patch_apply.h"
#include "source/source_tree.h"
#include "source/tree_snapshot.h"

namespace archbuild {

class SdistFetcher;

// What the user asked to build, as given on the command line or in a matrix cell.
struct SourceQuery {
  std::string what;          // RECIPE | PATH | URL | git+URL[@REF][#subdirectory=DIR] | pypi:NAME[==V] | ARCHIVE
  std::string ref;           // --ref: "" for the default
  std::string recipe;        // --recipe: build a PATH, URL or sdist with this recipe
  std::string subdirectory;  // --subdirectory: the project's directory inside the tree
};

// What `archbuild source|build X` means by X: a recipe name; a local git
// repository or a directory inside one (built as it is on disk, see
// below); a plain directory (snapshotted); a git URL, in pip's git+ spelling
// too (the recipe whose repository it is, else the generic cpp-extension
// recipe); pypi:NAME[==VERSION] or a local sdist file (made a commit of a
// mirror; the recipe whose repository is pypi:NAME, else cpp-extension).
struct SourceTarget {
  std::string name;  // recipe name, or the repository's (project's) name
  std::string url;   // the repository fetched from (a pip URL's without git+); pypi:NAME or the archive for an sdist
  std::string ref;   // resolved: --ref, the recipe's default, the remote's default branch, an sdist's version,
                     // or a snapshot's commit
  std::string work_tree_name;  // names the cache's work tree and build dir: the ref, or a snapshot's branch
  std::string subdirectory;    // the project's directory inside the tree; "" for the root
  bool submodules = true;
  const Recipe* recipe = nullptr;
  std::vector<PatchFile> patches;         // the recipe's for this ref
  std::vector<std::string> notes;         // what the user should know: "building PATH's HEAD ..."
  std::vector<std::string> warnings;      // ... and be warned of: "... as it is on disk: ... 3 edited paths"
  std::optional<SdistOrigin> sdist;       // set for an sdist: recorded in the manifest and the cache key
  std::optional<LocalSnapshot> snapshot;  // set for a directory built as it is on disk

  // What names this source on any machine, ref aside: "github.com/o/r",
  // "pypi:name", a local path; "#subdirectory=DIR" after it when set.
  std::string identity() const;
};

// A local repository without --ref is built as it is on disk: the commit
// it has checked out (its branch, or a detached HEAD) with its tracked
// changes and the untracked files .gitignore does not ignore, made a
// snapshot commit whose parent is that commit (tree_snapshot.h); a note
// says so, and the key holds the edits' sha256. Unchanged, it is the
// commit itself. With --ref a commit is built exactly. A path inside a
// repository builds that directory of it (the subdirectory).
// Throws UserError(bad_input) when X is none of these. `query.recipe`
// builds a PATH, URL or sdist with a named recipe instead: a fork of
// PyTorch with the torch recipe. A URL that is a recipe's repository
// (same_repository) picks that recipe by itself, with a note, and so do a
// local clone whose origin remote is one and an sdist of a recipe's PyPI
// project (its `pypi` key or pypi: repository). An sdist
// needs `sdists`. A URL's default branch is asked of where `rewriter` sends
// it (--mirror, the config's [mirrors]), as every fetch is.
SourceTarget resolve_source_target(const SourceQuery& query, const RecipeBook& book, const MirrorCache& mirrors,
                                   bool offline, const SdistFetcher* sdists = nullptr,
                                   const UrlRewriter* rewriter = nullptr);

}  // namespace archbuild
