#include "core/path_policy.h"

#include <algorithm>

namespace archbuild {

namespace {

bool equals_lower(std::string_view part, std::string_view lower) {
  return part.size() == lower.size() && std::equal(part.begin(), part.end(), lower.begin(), [](char a, char b) {
           return (a >= 'A' && a <= 'Z' ? a - 'A' + 'a' : a) == b;
         });
}

// `.git` as git itself refuses it (verify_path): in any case, with trailing
// dots or spaces (which Windows drops: `.git.` is `.git` there), and as its
// NTFS short name `git~1`.
bool is_dot_git(std::string_view part) {
  while (!part.empty() && (part.back() == '.' || part.back() == ' ')) part.remove_suffix(1);
  return equals_lower(part, ".git") || equals_lower(part, "git~1");
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
