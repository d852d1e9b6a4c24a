#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/path_policy.h"  // relative_path_problem: what a path a patch touches may be
#include "core/tree_files.h"
#include "source/git_session.h"

namespace archbuild {

struct PatchFile {
  std::filesystem::path path;
  std::string origin;  // "recipe" or "--patch"
};

struct AppliedPatch {
  std::string file;  // as given
  std::string origin;
  std::string sha256;                // feeds the cache key
  std::vector<std::string> created;  // paths the patch adds (removed before a re-apply)
};

// Applies git-format patches (git diff / git format-patch) to the work tree,
// in order, with libgit2. Every patch is first checked, chained on an
// in-memory tree, and only when all apply are files written: a failing patch
// leaves the tree as it was. Each path a patch touches is checked against
// the tree as the earlier patches leave it and against the work tree: a
// path that is absolute, climbs out with `..`, goes into `.git` or a
// submodule, or passes through a symlink (committed, made by an earlier
// patch or by this one, or untracked on disk) is rejected, and so is a
// symlink a patch adds whose target is absolute or leads out of the tree.
// The files are then written without following a symlink at any component.
// Errors name the patch file and the hunk or path. Throws UserError(bad_input).
std::vector<AppliedPatch> apply_patches(git_repository* repo, const std::vector<PatchFile>& patches);

}  // namespace archbuild
