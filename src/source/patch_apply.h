#pragma once

#include <filesystem>
#include <string>
#include <vector>

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
  std::vector<std::string> created;  // files the patch adds (removed before a re-apply)
};

// Applies git-format patches (git diff / git format-patch) to the work tree,
// in order, with libgit2. Every patch is first checked (chained on an
// in-memory tree), and only when all apply are files written: a failing
// patch leaves the tree pristine. A patch that writes outside the tree
// (absolute path, `..`, or through a symlink) is rejected. Errors name the
// patch file and the hunk. Throws UserError(bad_input).
std::vector<AppliedPatch> apply_patches(git_repository* repo, const std::vector<PatchFile>& patches);

}  // namespace archbuild
