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
  if (auto top_level = read_small(dist_info / "top_level.txt"); !top_level.empty()) {
    for (const auto& line : split_any(top_level, "\n"))
      if (trim(line) == package) return true;
    return false;
  }
  for (const auto& line : split_any(read_small(dist_info / "RECORD"), "\n"))
    if (line.starts_with(package + "/")) return true;
  return false;
}

bool on_code_host(const std::string& url) {
  for (const char* host : {"://github.com/", "://gitlab.com/", "://bitbucket.org/", "://codeberg.org/"})
    if (url.find(host) != std::string::npos) return true;
  return false;
}

}  // namespace

std::optional<DistributionInfo> distribution_of(const std::string& site_dir, const std::string& package) {
  std::error_code ec;
  const auto top = package.substr(0, package.find('/'));  // nvidia/cublas -> nvidia
  for (std::filesystem::directory_iterator it(site_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (!name.ends_with(".dist-info") || !it->is_directory(ec) || !owns(it->path(), top)) continue;
    DistributionInfo info;
    std::istringstream metadata(read_small(it->path() / "METADATA"));
    for (std::string line; std::getline(metadata, line) && !trim(line).empty();) {
      auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      auto key = line.substr(0, colon), value = trim(line.substr(colon + 1));
      if (key == "Name") info.name = value;
      if (key == "Version") info.version = value;
      if ((key == "Project-URL" || key == "Home-page") && info.repository.empty()) {
        auto url = trim(value.substr(value.find(',') == std::string::npos ? 0 : value.find(',') + 1));
        if (on_code_host(url)) info.repository = url;
      }
    }
    if (!info.name.empty() && !info.version.empty()) return info;
  }
  return std::nullopt;
}

}  // namespace archbuild
