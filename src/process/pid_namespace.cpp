#include "process/pid_namespace.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace archbuild {

std::optional<std::uint64_t> pid_namespace_inode(const std::string& process) {
  struct stat info {};
  if (::stat(("/proc/" + process + "/ns/pid").c_str(), &info) != 0) return std::nullopt;
  return static_cast<std::uint64_t>(info.st_ino);
}

namespace {

// "NSpid:\t4242\t17": the pid in each namespace from /proc's own inward.
std::vector<int> nspid_line(const std::filesystem::path& status) {
  std::ifstream in(status);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("NSpid:")) continue;
    std::istringstream fields(line.substr(6));
    std::vector<int> pids;
    for (int pid; fields >> pid;) pids.push_back(pid);
    return pids;
  }
  return {};
}

}  // namespace

std::map<int, int> outer_pids(std::uint64_t ns, const std::set<int>& inner) {
  std::map<int, int> found;
  if (inner.empty()) return found;
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (pid_namespace_inode(name) != ns) continue;  // gone, or another namespace's
    const auto pids = nspid_line(it->path() / "status");
    if (pids.size() < 2 || !inner.count(pids.back())) continue;
    found[pids.back()] = pids.front();
    if (found.size() == inner.size()) break;
  }
  return found;
}

}  // namespace archbuild
