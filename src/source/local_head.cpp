#include "source/local_head.h"

#include "core/error.h"
#include "source/git_session.h"

namespace archbuild {

namespace {
using GitDescribe = GitPtr<git_describe_result, git_describe_result_free>;
}  // namespace

LocalHead read_local_head(const std::filesystem::path& dir) {
  ensure_libgit2();
  git_repository* raw = nullptr;
  if (git_repository_open(&raw, dir.c_str()) != 0)
    fail_bad_input("'" + dir.string() + "' is not a git repository (" + git_last_error() + ")");
  Repository repo(raw);
  LocalHead head;
  git_reference* head_raw = nullptr;
  if (git_repository_head(&head_raw, repo.get()) != 0)
    fail_bad_input("'" + dir.string() + "' has no commit checked out (" + git_last_error() + "); commit first");
  GitReference reference(head_raw);
  const git_oid* oid = git_reference_target(reference.get());
  if (!oid) fail_bad_input("'" + dir.string() + "': HEAD does not name a commit");
  const std::string commit = oid_hex(*oid);
  head.commit = commit;
  if (git_repository_head_detached(repo.get()) == 1) {
    head.ref = commit;
    head.description = "detached HEAD at " + commit.substr(0, 12);
    git_object* object = nullptr;
    if (git_revparse_single(&object, repo.get(), "HEAD") == 0) {
      GitObject owned(object);
      git_describe_options options = GIT_DESCRIBE_OPTIONS_INIT;
      options.describe_strategy = GIT_DESCRIBE_TAGS;
      options.max_candidates_tags = 0;  // exact matches only
      git_describe_result* described = nullptr;
      if (git_describe_commit(&described, owned.get(), &options) == 0) {
        GitDescribe result(described);
        git_buf name = GIT_BUF_INIT;
        git_describe_format_options format = GIT_DESCRIBE_FORMAT_OPTIONS_INIT;
        if (git_describe_format(&name, result.get(), &format) == 0) {
          head.description += " (tag " + std::string(name.ptr, name.size) + ")";
          git_buf_dispose(&name);
        }
      }
    }
  } else {
    head.ref = git_reference_shorthand(reference.get());
    head.description = "branch " + head.ref + " at " + commit.substr(0, 12);
  }
  return head;
}

}  // namespace archbuild
