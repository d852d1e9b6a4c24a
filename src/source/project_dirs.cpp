#include "source/project_dirs.h"

#include <algorithm>

#include "core/strings.h"

namespace archbuild {

namespace {
constexpr int kMaxDepth = 6;
constexpr size_t kMaxEntries = 50000;

bool skipped_directory(const std::string& name) {
  return name.starts_with(".") || name == "build" || name == "dist" || name == "node_modules" ||
         name == "__pycache__" || name.ends_with(".egg-info");
}
}  // namespace

std::vector<ProjectDir> find_project_dirs(const std::filesystem::path& root) {
  std::vector<ProjectDir> dirs;
  std::vector<std::string> cuda_files;
  std::error_code ec;  // the walk's own: an entry that cannot be read ends it
  std::filesystem::recursive_directory_iterator it(root, std::filesystem::directory_options::none, ec), end;
  size_t seen = 0;
  auto is_project = [](const std::filesystem::path& dir) {
    std::error_code absent;
    return std::filesystem::is_regular_file(std::filesystem::symlink_status(dir / "setup.py", absent)) ||
           std::filesystem::is_regular_file(std::filesystem::symlink_status(dir / "pyproject.toml", absent));
  };
  if (is_project(root)) dirs.push_back({"", false});
  for (; !ec && it != end && seen < kMaxEntries; it.increment(ec), ++seen) {
    std::error_code entry_error;
    const auto status = it->symlink_status(entry_error);
    const std::string relative = it->path().lexically_relative(root).generic_string();
    if (std::filesystem::is_directory(status)) {
      if (skipped_directory(it->path().filename().string()) || it.depth() >= kMaxDepth) {
        it.disable_recursion_pending();
        continue;
      }
      if (is_project(it->path())) dirs.push_back({relative, false});
    } else if (std::filesystem::is_regular_file(status) && it->path().extension() == ".cu") {
      cuda_files.push_back(relative);
    }
  }
  for (auto& dir : dirs)
    dir.cuda_sources = std::any_of(cuda_files.begin(), cuda_files.end(), [&](const std::string& file) {
      return dir.path.empty() || file.starts_with(dir.path + "/");
    });
  std::sort(dirs.begin() + (dirs.empty() || !dirs.front().path.empty() ? 0 : 1), dirs.end(),
            [](const ProjectDir& a, const ProjectDir& b) { return a.path < b.path; });
  return dirs;
}

std::string describe_project_dirs(const std::vector<ProjectDir>& dirs, const std::string& except) {
  std::vector<std::string> with_cuda, without;
  for (const auto& dir : dirs) {
    if (dir.path == except || dir.path.empty()) continue;
    (dir.cuda_sources ? with_cuda : without).push_back("--subdirectory " + dir.path);
  }
  for (auto& entry : with_cuda) entry += " (CUDA sources)";
  with_cuda.insert(with_cuda.end(), without.begin(), without.end());
  if (with_cuda.size() > 8) with_cuda.resize(8);
  return join(with_cuda, ", ");
}

}  // namespace archbuild
