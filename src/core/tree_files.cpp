#include "core/tree_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <functional>

#include "core/error.h"
#include "core/unique_fd.h"

namespace archbuild {

namespace {

std::vector<std::string> split_path(std::string_view relative) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t slash = relative.find('/', start);
    parts.emplace_back(relative.substr(start, slash == std::string_view::npos ? slash : slash - start));
    if (slash == std::string_view::npos) return parts;
    start = slash + 1;
  }
}

std::string join_prefix(const std::vector<std::string>& parts, size_t count) {
  std::string joined;
  for (size_t i = 0; i < count && i < parts.size(); ++i) joined += (i ? "/" : "") + parts[i];
  return joined;
}

}  // namespace

std::vector<std::string> proper_prefixes(const std::string& path) {
  auto parts = split_path(path);
  std::vector<std::string> prefixes;
  for (size_t count = 1; count < parts.size(); ++count) prefixes.push_back(join_prefix(parts, count));
  return prefixes;
}

namespace {

std::string errno_text(int error) { return std::strerror(error); }

TreeFiles::Kind kind_at(int dir, const std::string& name) {
  struct stat st {};
  if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return TreeFiles::Kind::absent;
  if (S_ISDIR(st.st_mode)) return TreeFiles::Kind::directory;
  if (S_ISLNK(st.st_mode)) return TreeFiles::Kind::symlink;
  if (S_ISREG(st.st_mode)) return TreeFiles::Kind::file;
  return TreeFiles::Kind::other;
}

}  // namespace

const char* kind_word(TreeFiles::Kind kind) {
  switch (kind) {
    case TreeFiles::Kind::absent: return "nothing";
    case TreeFiles::Kind::directory: return "a directory";
    case TreeFiles::Kind::file: return "a file";
    case TreeFiles::Kind::symlink: return "a symlink";
    case TreeFiles::Kind::other: return "a special file";
  }
  return "something";
}

namespace {

// Every entry below the open directory `fd` (taken over), deepest first, never following a symlink.
void for_each_below(int fd, const std::string& prefix,
                    const std::function<void(int, const std::string&, const std::string&, bool)>& visit) {
  DIR* dir = ::fdopendir(fd);
  if (!dir) {
    int error = errno;
    ::close(fd);
    fail_environment("cannot read the directory " + prefix + ": " + errno_text(error));
  }
  std::vector<std::string> names;
  while (dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  int parent = ::dirfd(dir);
  for (const auto& name : names) {
    std::string path = prefix.empty() ? name : prefix + "/" + name;
    bool is_dir = kind_at(parent, name) == TreeFiles::Kind::directory;
    if (is_dir) {
      int sub = ::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub < 0) {
        int error = errno;
        ::closedir(dir);
        fail_environment("cannot open the directory " + path + ": " + errno_text(error));
      }
      for_each_below(sub, path, visit);
    }
    visit(parent, name, path, is_dir);
  }
  ::closedir(dir);
}

std::string temporary_name() {
  static std::atomic<unsigned> counter{0};
  return ".archbuild-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".tmp";
}

}  // namespace

std::string symlink_target_problem(std::string_view link, std::string_view target) {
  if (target.empty()) return "is empty";
  if (target.front() == '/') return "is absolute";
  long depth = static_cast<long>(split_path(link).size()) - 1;  // the link's directory
  for (const auto& part : split_path(target)) {
    if (part.empty() || part == ".") continue;
    if (part != "..")
      ++depth;
    else if (--depth < 0)
      return "climbs out of the tree";
  }
  return "";
}

TreeFiles::TreeFiles(const std::filesystem::path& root) : root_(root) {
  fd_ = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ < 0) fail_environment("cannot open the directory " + root.string() + ": " + errno_text(errno));
}

TreeFiles::~TreeFiles() {
  if (fd_ >= 0) ::close(fd_);
}

// The open directory holding the last component, or -1: a prefix is absent
// (and `create` is false) or is not a directory (`blocked` and `kind` say which).
int TreeFiles::open_parent(const std::vector<std::string>& parts, bool create, std::string* blocked, Kind* kind) const {
  for (const auto& part : parts)
    if (part.empty() || part == "." || part == "..")
      fail_bad_input("'" + join_prefix(parts, parts.size()) + "' is not a path inside " + root_.string());
  UniqueFd current(::dup(fd_));
  if (current.get() < 0) fail_environment("cannot open the directory " + root_.string() + ": " + errno_text(errno));
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    const char* name = parts[i].c_str();
    int next = ::openat(current.get(), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0 && errno == ENOENT && create) {
      if (::mkdirat(current.get(), name, 0777) != 0 && errno != EEXIST)
        fail_environment("cannot create " + (root_ / join_prefix(parts, i + 1)).string() + ": " + errno_text(errno));
      next = ::openat(current.get(), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (next < 0) {
      int error = errno;
      Kind found = kind_at(current.get(), parts[i]);
      if (found == Kind::absent) return -1;
      if (found != Kind::directory) {
        if (blocked) *blocked = join_prefix(parts, i + 1);
        if (kind) *kind = found;
        return -1;
      }
      fail_environment("cannot open " + (root_ / join_prefix(parts, i + 1)).string() + ": " + errno_text(error));
    }
    current = UniqueFd(next);
  }
  return current.release();
}

std::string TreeFiles::blocked_prefix(std::string_view relative, Kind* kind) const {
  std::string blocked;
  UniqueFd parent(open_parent(split_path(relative), false, &blocked, kind));
  return blocked;
}

TreeFiles::Kind TreeFiles::kind(std::string_view relative) const {
  auto parts = split_path(relative);
  UniqueFd parent(open_parent(parts, false, nullptr, nullptr));
  return parent.get() < 0 ? Kind::absent : kind_at(parent.get(), parts.back());
}

std::vector<std::string> TreeFiles::files_below(std::string_view relative) const {
  std::vector<std::string> files;
  auto parts = split_path(relative);
  UniqueFd parent(open_parent(parts, false, nullptr, nullptr));
  if (parent.get() < 0) return files;
  int dir = ::openat(parent.get(), parts.back().c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0) return files;
  for_each_below(dir, std::string(relative), [&](int, const std::string&, const std::string& path, bool is_dir) {
    if (!is_dir) files.push_back(path);
  });
  std::sort(files.begin(), files.end());
  return files;
}

int TreeFiles::open_parent_for_write(const std::vector<std::string>& parts, const std::string& where) const {
  std::string blocked;
  Kind kind = Kind::absent;
  int parent = open_parent(parts, true, &blocked, &kind);
  if (parent < 0) {
    if (!blocked.empty())
      fail_bad_input("refusing to write " + where + ": " + blocked + " is " + kind_word(kind) + ", not a directory");
    fail_environment("cannot create the directories of " + where);
  }
  return parent;
}

void TreeFiles::write_file(std::string_view relative, std::string_view content, bool executable) const {
  auto parts = split_path(relative);
  std::string where = (root_ / relative).string();
  UniqueFd parent(open_parent_for_write(parts, where));
  std::string temporary = temporary_name();
  UniqueFd out(::openat(parent.get(), temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                        executable ? 0777 : 0666));
  if (out.get() < 0) fail_environment("cannot write " + where + ": " + errno_text(errno));
  auto fail = [&](int error) {
    ::unlinkat(parent.get(), temporary.c_str(), 0);
    fail_environment("cannot write " + where + ": " + errno_text(error));
  };
  for (size_t done = 0; done < content.size();) {
    ssize_t n = ::write(out.get(), content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(errno);
    done += static_cast<size_t>(n);
  }
  if (::close(out.release()) != 0) fail(errno);
  if (::renameat(parent.get(), temporary.c_str(), parent.get(), parts.back().c_str()) != 0) fail(errno);
}

void TreeFiles::write_symlink(std::string_view relative, std::string_view target) const {
  auto parts = split_path(relative);
  std::string where = (root_ / relative).string();
  UniqueFd parent(open_parent_for_write(parts, where));
  std::string temporary = temporary_name();
  if (::symlinkat(std::string(target).c_str(), parent.get(), temporary.c_str()) != 0)
    fail_environment("cannot write " + where + ": " + errno_text(errno));
  if (::renameat(parent.get(), temporary.c_str(), parent.get(), parts.back().c_str()) != 0) {
    int error = errno;
    ::unlinkat(parent.get(), temporary.c_str(), 0);
    fail_environment("cannot write " + where + ": " + errno_text(error));
  }
}

bool TreeFiles::remove_file(std::string_view relative) const {
  auto parts = split_path(relative);
  UniqueFd parent(open_parent(parts, false, nullptr, nullptr));
  if (parent.get() < 0) return false;
  Kind kind = kind_at(parent.get(), parts.back());
  if (kind == Kind::absent || kind == Kind::directory) return false;
  if (::unlinkat(parent.get(), parts.back().c_str(), 0) != 0) {
    if (errno == ENOENT) return false;
    fail_environment("cannot remove " + (root_ / relative).string() + ": " + errno_text(errno));
  }
  return true;
}

bool TreeFiles::remove(std::string_view relative) const {
  auto parts = split_path(relative);
  UniqueFd parent(open_parent(parts, false, nullptr, nullptr));
  if (parent.get() < 0) return false;
  const std::string& leaf = parts.back();
  Kind kind = kind_at(parent.get(), leaf);
  if (kind == Kind::absent) return false;
  auto unlink = [&](int dir, const std::string& name, const std::string& path, bool is_dir) {
    if (::unlinkat(dir, name.c_str(), is_dir ? AT_REMOVEDIR : 0) != 0 && errno != ENOENT)
      fail_environment("cannot remove " + (root_ / path).string() + ": " + errno_text(errno));
  };
  if (kind == Kind::directory) {
    int dir = ::openat(parent.get(), leaf.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dir < 0) fail_environment("cannot open " + (root_ / relative).string() + ": " + errno_text(errno));
    for_each_below(dir, std::string(relative), unlink);
  }
  unlink(parent.get(), leaf, std::string(relative), kind == Kind::directory);
  return true;
}

void TreeFiles::remove_empty_parents(std::string_view relative) const {
  auto parts = split_path(relative);
  for (size_t count = parts.size() - 1; count > 0; --count) {
    std::vector<std::string> prefix(parts.begin(), parts.begin() + static_cast<long>(count));
    UniqueFd parent(open_parent(prefix, false, nullptr, nullptr));
    if (parent.get() < 0 || kind_at(parent.get(), prefix.back()) != Kind::directory) return;
    if (::unlinkat(parent.get(), prefix.back().c_str(), AT_REMOVEDIR) != 0) return;  // not empty: keep it
  }
}

}  // namespace archbuild
