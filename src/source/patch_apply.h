#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/path_policy.h"  // relative_path_problem: what a path a patch touches may be
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

// Why a symlink at `link` (a path inside the tree) with this target could
// lead out of the tree ("" when it cannot): the target is empty, absolute,
// or climbs above the top, read lexically from the link's directory.
std::string symlink_target_problem(std::string_view link, std::string_view target);

// A directory tree archbuild manages, every path reached from one open
// directory one component at a time without following a symlink: what it
// writes or removes cannot land outside, whatever the tree holds. Paths are
// relative to the root; one with an empty, `.` or `..` component is refused.
class TreeFiles {
 public:
  enum class Kind { absent, directory, file, symlink, other };

  explicit TreeFiles(const std::filesystem::path& root);  // the root itself is opened as given
  ~TreeFiles();
  TreeFiles(const TreeFiles&) = delete;
  TreeFiles& operator=(const TreeFiles&) = delete;

  const std::filesystem::path& root() const { return root_; }
  // The first proper prefix of `relative` that exists and is not a directory
  // ("" when there is none), and what it is.
  std::string blocked_prefix(std::string_view relative, Kind* kind = nullptr) const;
  // `relative` itself, never followed; absent when a prefix is not a directory.
  Kind kind(std::string_view relative) const;
  // Every entry below the directory `relative` that is not a directory.
  std::vector<std::string> files_below(std::string_view relative) const;
  // Written aside and renamed into place (so a symlink there is replaced, not
  // followed); missing directories are created.
  void write_file(std::string_view relative, std::string_view content, bool executable = false) const;
  void write_symlink(std::string_view relative, std::string_view target) const;
  // A file or symlink; false when absent, a directory, or behind a non-directory.
  bool remove_file(std::string_view relative) const;
  // Anything, a directory with all it holds; false when absent or behind a non-directory.
  bool remove(std::string_view relative) const;
  // The directories above `relative` that are empty, deepest first; never the root.
  void remove_empty_parents(std::string_view relative) const;

 private:
  int open_parent(const std::vector<std::string>& parts, bool create, std::string* blocked, Kind* kind) const;
  // open_parent(create) for a write to `where`, or the error naming what is in the way.
  int open_parent_for_write(const std::vector<std::string>& parts, const std::string& where) const;

  int fd_ = -1;
  std::filesystem::path root_;
};

}  // namespace archbuild
