#include "source/git_session.h"

#include <mutex>

#include "core/error.h"

namespace archbuild {

void ensure_libgit2() {
  static std::once_flag once;
  std::call_once(once, [] {
    git_libgit2_init();
    git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, 0);
  });
}

std::string git_last_error() {
  const git_error* error = git_error_last();
  return error && error->message ? error->message : "unknown libgit2 error";
}

void git_check(int rc, const std::string& what) {
  if (rc < 0) throw UserError(ExitCode::work_failed, what + ": " + git_last_error());
}

Repository open_repository(const std::string& path) {
  ensure_libgit2();
  git_repository* repo = nullptr;
  git_check(git_repository_open(&repo, path.c_str()), "cannot open git repository " + path);
  return Repository(repo);
}

std::string oid_hex(const git_oid& oid) {
  char text[GIT_OID_HEXSZ + 1];
  git_oid_tostr(text, sizeof text, &oid);
  return text;
}

}  // namespace archbuild
