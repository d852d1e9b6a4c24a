#pragma once

#include <filesystem>
#include <string>

namespace archbuild {

// What a local repository has checked out, for `build PATH` without --ref:
// the branch HEAD is on, or the commit of a detached HEAD (a tag checkout, a
// local commit). What differs on disk is tree_snapshot.h's.
struct LocalHead {
  std::string ref;          // "main", or the commit's 40 hex digits
  std::string commit;       // the commit's 40 hex digits
  std::string description;  // "branch main at 1a2b3c4d5e6f", "detached HEAD at 1a2b3c4d5e6f (tag v1.0)"
};

// Throws UserError(bad_input) when `dir` is not a repository with a HEAD commit.
LocalHead read_local_head(const std::filesystem::path& dir);

}  // namespace archbuild
