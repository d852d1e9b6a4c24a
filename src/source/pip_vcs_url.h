#pragma once

#include <optional>
#include <string>

namespace archbuild {

// pip's and uv's spelling of a git source:
//   git+SCHEME://HOST/PATH[@REF][#egg=NAME&subdirectory=DIR]
// with SCHEME https, http, ssh, file or git; the REF is what follows the
// last '@' of the path (a user name before the host is not one).
struct PipVcsUrl {
  std::string url;           // the repository, without "git+", REF or fragment
  std::string ref;           // "" when none is given
  std::string subdirectory;  // "" for the repository's root
  std::string egg;           // the project name pip may be told, "" when absent
};

// Starts with "git+" (or another VCS's "hg+", "svn+", "bzr+", which parse refuses).
bool is_pip_vcs_url(const std::string& text);

// Throws UserError(bad_input) naming what is wrong: another VCS (hg+, svn+,
// bzr+), an unknown scheme or fragment key, an empty ref, a subdirectory
// that is not a relative path inside the tree (core/path_policy).
PipVcsUrl parse_pip_vcs_url(const std::string& text);

// Throws UserError(bad_input) unless `dir` names a directory inside a tree
// (a trailing '/' aside): "" stays "". `where` says who gave it.
std::string checked_subdirectory(const std::string& dir, const std::string& where);

}  // namespace archbuild
