#include "core/path_policy.h"

#include <algorithm>

namespace archbuild {

namespace {

bool is_dot_git(std::string_view part) {
  constexpr std::string_view kDotGit = ".git";
  return part.size() == kDotGit.size() && std::equal(part.begin(), part.end(), kDotGit.begin(), [](char a, char b) {
           return (a >= 'A' && a <= 'Z' ? a - 'A' + 'a' : a) == b;
         });
}

}  // namespace

std::string relative_path_problem(std::string_view path) {
  if (path.empty()) return "is empty";
  if (path.front() == '/') return "is an absolute path";
  if (path.find('\0') != std::string_view::npos) return "holds a NUL byte";
  if (path.find('\\') != std::string_view::npos) return "holds a backslash";
  if (std::any_of(path.begin(), path.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }))
    return "holds a control character";
  for (size_t start = 0;;) {
    const size_t slash = path.find('/', start);
    const auto part = path.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (part == "..") return "climbs out with '..'";
    if (part.empty() || part == ".")
      return "is not normalised (an empty or '.' component: write a/b, not ./a/b or a/b/)";
    if (is_dot_git(part)) return "goes into .git";
    if (slash == std::string_view::npos) return "";
    start = slash + 1;
  }
}

}  // namespace archbuild
