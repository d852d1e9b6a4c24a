#pragma once

#include <string>
#include <string_view>

namespace archbuild {

// The one rule for a relative path that names something inside a tree (a
// path a patch touches, a submodule's path, an sdist member, a recipe's
// fresh_configure_removes, requires_from or wheel_dir): "" when `path` is
// one, else why not, to follow the path in a message:
//   "is empty"
//   "is an absolute path"
//   "holds a NUL byte"
//   "holds a backslash" (a directory separator to Windows and to some tools)
//   "holds a control character" (a newline, an escape: what a terminal or a
//     line-based file would misread)
//   "climbs out with '..'" (any `..` component, even one that comes back)
//   "is not normalised (...)" (an empty or `.` component: `./a`, `a//b`,
//     `a/`, `.`; one spelling per path, and never the tree itself)
//   "goes into .git" (a `.git` component anywhere, in any case, as git
//     itself refuses it: `.GIT` is `.git` on a case-insensitive disk, `.git.`
//     and `.git ` are `.git` on Windows, `GIT~1` its short name)
std::string relative_path_problem(std::string_view path);

}  // namespace archbuild
