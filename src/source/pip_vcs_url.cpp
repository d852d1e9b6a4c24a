#include "source/pip_vcs_url.h"

#include <cctype>

#include "core/error.h"
#include "core/path_policy.h"
#include "core/strings.h"

namespace archbuild {

namespace {
[[noreturn]] void bad_url(const std::string& text, const std::string& why) {
  fail_bad_input("'" + text + "': " + why +
                 " (expected git+https://HOST/OWNER/REPO[@REF][#subdirectory=DIR], as pip and uv spell it)");
}

}  // namespace

bool is_pip_vcs_url(const std::string& text) {
  for (const char* prefix : {"git+", "hg+", "svn+", "bzr+"})
    if (text.starts_with(prefix)) return true;
  return false;
}

std::string checked_subdirectory(const std::string& dir, const std::string& where) {
  std::string path = dir;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  if (path.empty()) return "";
  const std::string problem = relative_path_problem(path);
  if (!problem.empty())
    fail_bad_input(where + " '" + dir + "' " + problem + ": it names a directory inside the source tree");
  return path;
}

PipVcsUrl parse_pip_vcs_url(const std::string& text) {
  for (const char* other : {"hg+", "svn+", "bzr+"})
    if (text.starts_with(other))
      bad_url(text, std::string("archbuild builds git sources; ") + other + " is another version control system");
  if (!text.starts_with("git+")) bad_url(text, "not a git+ URL");
  std::string rest = text.substr(4);
  PipVcsUrl parsed;
  if (auto hash = rest.find('#'); hash != std::string::npos) {
    for (const auto& part : split_any(rest.substr(hash + 1), "&")) {
      if (part.empty()) continue;
      auto eq = part.find('=');
      const std::string key = part.substr(0, eq);
      const std::string value = eq == std::string::npos
                                    ? ""
                                    : percent_decode(part.substr(eq + 1)).value_or(part.substr(eq + 1));
      if (key == "subdirectory")
        parsed.subdirectory = checked_subdirectory(value, "#subdirectory=");
      else if (key == "egg")
        parsed.egg = value;
      else
        bad_url(text, "unknown fragment key '" + key + "' (pip knows egg= and subdirectory=)");
      if (value.empty()) bad_url(text, "#" + key + "= is empty");
    }
    rest.erase(hash);
  }
  const auto scheme_end = rest.find("://");
  if (scheme_end == std::string::npos) bad_url(text, "no scheme://");
  const std::string scheme = rest.substr(0, scheme_end);
  if (scheme != "https" && scheme != "http" && scheme != "ssh" && scheme != "file" && scheme != "git")
    bad_url(text, "git+" + scheme + " is not a scheme pip takes (https, http, ssh, file, git)");
  // The ref is after the last '@' of the path; an '@' before the host's end is a user name.
  const size_t path_start = rest.find('/', scheme_end + 3);
  if (path_start == std::string::npos && scheme != "file") bad_url(text, "no repository path after the host");
  if (auto at = rest.rfind('@'); at != std::string::npos && path_start != std::string::npos && at > path_start) {
    parsed.ref = rest.substr(at + 1);
    if (parsed.ref.empty()) bad_url(text, "nothing after '@' (a tag, branch or commit)");
    rest.erase(at);
  }
  parsed.url = rest;
  if (parsed.url.size() <= scheme_end + 3) bad_url(text, "no repository");
  return parsed;
}

}  // namespace archbuild
