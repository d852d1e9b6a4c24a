#include "recipe/repository_url.h"

#include <cctype>
#include <filesystem>
#include <map>

#include "core/strings.h"

namespace archbuild {

std::string canonical_project_name(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      if (out.empty() || out.back() != '-') out.push_back('-');
    } else {
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
  }
  return out;
}

bool valid_project_name(std::string_view name) {
  if (name.empty()) return false;
  auto alnum = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) && static_cast<unsigned char>(c) < 128;
  };
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  for (char c : name)
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

namespace {

std::string trimmed_path(std::string path) {
  auto strip_slashes = [&] {
    while (!path.empty() && path.back() == '/') path.pop_back();
  };
  strip_slashes();
  if (path.size() > 4 && path.substr(path.size() - 4) == ".git") path.resize(path.size() - 4);
  strip_slashes();
  while (!path.empty() && path.front() == '/') path.erase(0, 1);
  // "o//r" and "o/r" are one path to every git host.
  std::string collapsed;
  for (char c : path)
    if (c != '/' || collapsed.empty() || collapsed.back() != '/') collapsed.push_back(c);
  return collapsed;
}

// "user@Host:22" -> "host" (the scheme's default port dropped).
std::string host_identity(std::string authority, const std::string& scheme) {
  if (auto at = authority.rfind('@'); at != std::string::npos) authority.erase(0, at + 1);
  authority = to_lower(authority);
  static const std::map<std::string, std::string> default_ports = {{"http", "80"},    {"https", "443"},
                                                                   {"ssh", "22"},     {"git+ssh", "22"},
                                                                   {"ssh+git", "22"}, {"git", "9418"}};
  auto colon = authority.rfind(':');
  if (colon != std::string::npos && authority.find(']', colon) == std::string::npos) {
    auto port = authority.substr(colon + 1);
    auto known = default_ports.find(scheme);
    if (port.empty() || (known != default_ports.end() && known->second == port)) authority.resize(colon);
  }
  return authority;
}

}  // namespace

std::string repository_identity(const std::string& text) {
  std::string url = trim(text);
  if (url.empty()) return "";
  if (is_pypi_repository(url)) {
    std::string name = url.substr(kPypiPrefix.size());
    if (auto op = name.find("=="); op != std::string::npos) name.resize(op);
    return std::string(kPypiPrefix) + canonical_project_name(trim(name));
  }
  auto scheme_end = url.find("://");
  if (scheme_end != std::string::npos) {
    std::string scheme = to_lower(url.substr(0, scheme_end));
    std::string rest = url.substr(scheme_end + 3);
    if (scheme == "file")
      return "file:///" + std::filesystem::path(trimmed_path(rest)).lexically_normal().generic_string();
    auto slash = rest.find('/');
    std::string authority = rest.substr(0, slash);
    std::string path = slash == std::string::npos ? "" : rest.substr(slash);
    std::string host = host_identity(authority, scheme);
    if (host.empty()) return "";
    return host + "/" + trimmed_path(path);
  }
  // scp-like: [user@]host:path, with the colon before any slash.
  auto colon = url.find(':');
  auto slash = url.find('/');
  if (colon != std::string::npos && colon > 0 && (slash == std::string::npos || colon < slash)) {
    std::string host = host_identity(url.substr(0, colon), "ssh");
    if (host.empty()) return "";
    return host + "/" + trimmed_path(url.substr(colon + 1));
  }
  return "";
}

bool same_repository(const std::string& a, const std::string& b) {
  const auto left = repository_identity(a);
  const auto right = repository_identity(b);
  if (left.empty()) return false;
  if (left == right) return true;
  // GitHub and GitLab find a repository whatever the case of its owner and name.
  for (std::string_view host : {"github.com/", "gitlab.com/"})
    if (left.starts_with(host) && right.starts_with(host)) return to_lower(left) == to_lower(right);
  return false;
}

}  // namespace archbuild
