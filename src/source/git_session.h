#pragma once

#include <memory>
#include <string>

#include <git2.h>

namespace archbuild {

// libgit2 initialised for the process lifetime (owner validation off: build
// containers often run as root over trees owned by someone else).
void ensure_libgit2();

// Throws UserError(work_failed... ) with libgit2's last message when rc < 0.
void git_check(int rc, const std::string& what);
std::string git_last_error();

struct RepositoryDeleter {
  void operator()(git_repository* repo) const { git_repository_free(repo); }
};
using Repository = std::unique_ptr<git_repository, RepositoryDeleter>;

template <typename T, void (*Free)(T*)>
struct GitDeleter {
  void operator()(T* object) const { Free(object); }
};
template <typename T, void (*Free)(T*)>
using GitPtr = std::unique_ptr<T, GitDeleter<T, Free>>;

using GitObject = GitPtr<git_object, git_object_free>;
using GitCommit = GitPtr<git_commit, git_commit_free>;
using GitTree = GitPtr<git_tree, git_tree_free>;
using GitRemote = GitPtr<git_remote, git_remote_free>;
using GitReference = GitPtr<git_reference, git_reference_free>;
using GitSubmodule = GitPtr<git_submodule, git_submodule_free>;
using GitDiff = GitPtr<git_diff, git_diff_free>;
using GitIndex = GitPtr<git_index, git_index_free>;

Repository open_repository(const std::string& path);
std::string oid_hex(const git_oid& oid);

}  // namespace archbuild
