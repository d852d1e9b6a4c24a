#include "process/host_sockets.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace archbuild {

std::vector<std::string> socket_paths_in_proc_net_unix(const std::string& text) {
  // "Num RefCount Protocol Flags Type St Inode Path": the path, when there
  // is one, is the rest of the line after the seventh field; '@' marks an
  // abstract name (closed by the network namespace already).
  std::vector<std::string> paths;
  std::istringstream lines(text);
  std::string line;
  std::getline(lines, line);  // the header
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string field;
    for (int i = 0; i < 7 && fields >> field; ++i) {
    }
    std::string path;
    std::getline(fields >> std::ws, path);
    if (!path.empty() && path.front() == '/') paths.push_back(path);
  }
  return paths;
}

std::vector<std::string> host_socket_paths(size_t limit) {
  std::set<std::string> found;
  {
    std::ifstream in("/proc/net/unix");
    std::stringstream text;
    text << in.rdbuf();
    for (auto& path : socket_paths_in_proc_net_unix(text.str())) found.insert(std::move(path));
  }
  namespace fs = std::filesystem;
  constexpr int max_depth = 6;
  constexpr size_t max_entries = 50000;  // a /tmp of millions of files is not walked to the end
  size_t visited = 0;
  for (const char* root : {"/tmp", "/run", "/var/run", "/dev/shm"}) {
    std::error_code ec;
    if (fs::is_symlink(root, ec)) continue;  // /var/run -> /run: walked once
    fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
    for (; !ec && it != end && visited < max_entries; it.increment(ec), ++visited) {
      if (it.depth() >= max_depth) it.disable_recursion_pending();
      std::error_code status_error;
      if (it->is_socket(status_error) && !it->is_symlink(status_error)) found.insert(it->path().string());
    }
  }
  std::vector<std::string> paths(found.begin(), found.end());
  if (paths.size() > limit) paths.resize(limit);
  return paths;
}

}  // namespace archbuild
