#include "doctor/distribution_info.h"

#include <filesystem>
#include <sstream>

#include "core/regular_file.h"
#include "core/strings.h"

namespace archbuild {

namespace {

constexpr uint64_t kMetadataCap = 4u << 20;

std::string read_small(const std::filesystem::path& path) {
  std::string content;
  return read_regular_file(path, kMetadataCap, content).empty() ? content : "";
}

// Whether the dist-info's package list names `package` as a top-level dir.
bool owns(const std::filesystem::path& dist_info, const std::string& package) {
  for (const auto& line : split_any(read_small(dist_info / "top_level.txt"), "\n"))
    if (trim(line) == package) return true;
  // RECORD too: auditwheel's vendored NAME.libs/ is in no top_level.txt
  for (const auto& line : split_any(read_small(dist_info / "RECORD"), "\n"))
    if (line.starts_with(package + "/")) return true;
  return false;
}

// https://github.com/OWNER/REPO from a URL on a code host ("…/cupy/issues",
// "…/tree/main/docs" are the same repository); "" for any other URL.
std::string repository_root(const std::string& url) {
  for (const char* host : {"https://github.com/", "https://gitlab.com/", "https://bitbucket.org/",
                           "https://codeberg.org/", "http://github.com/"}) {
    if (!url.starts_with(host)) continue;
    auto parts = split_any(url.substr(std::string(host).size()), "/#?");
    if (parts.size() < 2 || parts[0].empty() || parts[1].empty()) return "";
    auto repo = parts[1].ends_with(".git") ? parts[1].substr(0, parts[1].size() - 4) : parts[1];
    // An owner and a repository as code hosts spell them: nothing a shell reads, no "." or ".."
    for (const auto& part : {parts[0], repo})
      if (part.empty() || part == "." || part == ".." || part.size() > 100 ||
          part.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") !=
              std::string::npos)
        return "";
    return "https://" + std::string(host).substr(std::string(host).find("://") + 3) + parts[0] + "/" + repo;
  }
  return "";
}

// How much a Project-URL's label says "the code": Source, Repository, Code
// first, then Homepage; a tracker, the docs or funding never.
int label_rank(std::string label) {
  label = to_lower(trim(label));
  for (const char* word : {"source", "repository", "code", "github", "git"})
    if (label.find(word) != std::string::npos) return 3;
  for (const char* word : {"issue", "bug", "tracker", "doc", "changelog", "release", "funding", "sponsor", "chat"})
    if (label.find(word) != std::string::npos) return 0;
  return label.find("home") != std::string::npos ? 2 : 1;
}

}  // namespace

std::optional<DistributionInfo> distribution_of(const std::string& site_dir, const std::string& package) {
  std::error_code ec;
  const auto top = package.substr(0, package.find('/'));  // nvidia/cublas -> nvidia
  for (std::filesystem::directory_iterator it(site_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (!name.ends_with(".dist-info") || !it->is_directory(ec) || !owns(it->path(), top)) continue;
    DistributionInfo info;
    int best = 0;
    std::istringstream metadata(read_small(it->path() / "METADATA"));
    for (std::string line; std::getline(metadata, line) && !trim(line).empty();) {
      auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      auto key = line.substr(0, colon), value = trim(line.substr(colon + 1));
      if (key == "Name") info.name = value;
      if (key == "Version") info.version = value;
      if (key == "Project-URL" || key == "Home-page") {
        auto comma = value.find(',');
        auto label = key == "Home-page" ? std::string("homepage")
                                        : value.substr(0, comma == std::string::npos ? 0 : comma);
        auto root = repository_root(trim(comma == std::string::npos ? value : value.substr(comma + 1)));
        if (int rank = label_rank(label); !root.empty() && rank > best) {
          best = rank;
          info.repository = root;
        }
      }
    }
    if (!info.name.empty() && !info.version.empty()) return info;
  }
  return std::nullopt;
}

}  // namespace archbuild
