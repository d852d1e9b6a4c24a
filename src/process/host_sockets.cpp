#include "process/host_sockets.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/log.h"

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

namespace {

// Whether `path` names a socket file now, through no symbolic link: what
// /proc/net/unix prints is the name the socket was bound under (a later
// rename, a directory swapped for a link, or a newline in the name that
// forges a line would otherwise have /dev/null bound over another file).
bool is_socket_file(const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty() || path.front() != '/' || path.find('\n') != std::string::npos) return false;
  std::error_code ec;
  auto status = fs::symlink_status(path, ec);
  if (ec || status.type() != fs::file_type::socket) return false;
  auto parent = fs::canonical(fs::path(path).parent_path(), ec);
  return !ec && parent / fs::path(path).filename() == fs::path(path).lexically_normal();
}

}  // namespace

std::vector<std::string> host_socket_paths(size_t limit) {
  std::set<std::string> found;
  {
    std::ifstream in("/proc/net/unix");
    std::stringstream text;
    text << in.rdbuf();
    for (auto& path : socket_paths_in_proc_net_unix(text.str()))
      if (is_socket_file(path)) found.insert(std::move(path));
  }
  namespace fs = std::filesystem;
  constexpr int max_depth = 6;
  // Each directory its own budget, the well-known ones first: a /tmp of
  // millions of files is not walked to the end, and does not starve /run.
  constexpr size_t max_entries_per_root = 20000;
  for (const char* root : {"/run", "/var/run", "/dev/shm", "/tmp"}) {
    std::error_code ec;
    if (fs::is_symlink(root, ec)) continue;  // /var/run -> /run: walked once
    size_t visited = 0;
    fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
    while (!ec && it != end && visited < max_entries_per_root) {
      if (it.depth() >= max_depth) it.disable_recursion_pending();
      std::error_code status_error;
      if (it->is_socket(status_error) && !it->is_symlink(status_error)) found.insert(it->path().string());
      ++visited;
      it.increment(ec);
      if (ec) {  // a directory gone meanwhile, an I/O error: skip it, go on with the rest
        ec.clear();
        if (it != end) it.pop(ec);
      }
    }
    if (visited >= max_entries_per_root)
      log::verbose("offline build: {} holds over {} entries; socket files past them are not covered", root,
                   max_entries_per_root);
  }
  std::vector<std::string> paths(found.begin(), found.end());
  if (paths.size() > limit) {
    log::warning("offline build: {} host socket files found; only {} are covered", paths.size(), limit);
    paths.resize(limit);
  }
  return paths;
}

}  // namespace archbuild
