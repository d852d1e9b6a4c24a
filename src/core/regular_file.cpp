#include "core/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "core/sha256.h"

namespace archbuild {

namespace {

// An open descriptor, closed on scope exit.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Opens `path` for reading when it is a regular file; else why not, with
// `error` the errno of a failed open (0 otherwise).
std::string open_regular(const std::filesystem::path& path, int extra_flags, Fd& file, int& error) {
  error = 0;
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | extra_flags);
  if (file.fd < 0) {
    error = errno;
    if (error == ELOOP && (extra_flags & O_NOFOLLOW)) return "is a symbolic link, not a regular file";
    return std::string("cannot be opened: ") + std::strerror(error);
  }
  struct stat info {};
  if (::fstat(file.fd, &info) != 0) return std::string("cannot be examined: ") + std::strerror(errno);
  if (!S_ISREG(info.st_mode))
    return S_ISFIFO(info.st_mode)  ? "is a FIFO, not a regular file"
           : S_ISCHR(info.st_mode) ? "is a character device, not a regular file"
           : S_ISDIR(info.st_mode) ? "is a directory, not a regular file"
                                   : "is not a regular file";
  return {};
}

std::string read_open_file(int fd, uint64_t cap, std::string& content) {
  content.clear();
  char buffer[1 << 16];
  for (;;) {
    ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return std::string("cannot be read: ") + std::strerror(errno);
    if (got == 0) return {};
    if (content.size() + static_cast<uint64_t>(got) > cap)
      return "is larger than " + std::to_string(cap >> 20) + " MiB, more than archbuild ever writes there";
    content.append(buffer, static_cast<size_t>(got));
  }
}

[[noreturn]] void throw_errno(const std::string& what, const std::filesystem::path& path, int error) {
  throw std::filesystem::filesystem_error(what, path, std::error_code(error, std::generic_category()));
}

}  // namespace

std::string read_regular_file(const std::filesystem::path& path, uint64_t cap, std::string& content) {
  Fd file;
  int error;
  if (auto why = open_regular(path, 0, file, error); !why.empty()) return why;
  return read_open_file(file.fd, cap, content);
}

std::string hash_regular_file(const std::filesystem::path& path, std::string& hex) {
  Fd file;
  int error;
  if (auto why = open_regular(path, 0, file, error); !why.empty()) return why;
  Sha256 digest;
  char buffer[1 << 16];
  for (;;) {
    ssize_t got = ::read(file.fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return std::string("cannot be read: ") + std::strerror(errno);
    if (got == 0) break;
    digest.update(buffer, static_cast<size_t>(got));
  }
  hex = digest.hex();
  return {};
}

std::optional<std::string> read_own_file(const std::filesystem::path& path, uint64_t cap) {
  Fd file;
  int error;
  std::string content;
  auto why = open_regular(path, O_NOFOLLOW, file, error);
  if (error == ENOENT || error == ENOTDIR) return std::nullopt;  // also an entry a `cache gc` just renamed away
  if (why.empty()) why = read_open_file(file.fd, cap, content);
  if (why.empty()) return content;
  if (error && error != ELOOP) fail_environment(path.string() + " " + why);
  fail_bad_input(path.string() + " " + why + ": archbuild reads back only the regular files it wrote there");
}

void write_whole_file(const std::filesystem::path& path, std::string_view content) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) throw_errno("cannot create", path, errno);
  while (!content.empty()) {
    ssize_t wrote = ::write(fd, content.data(), content.size());
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote < 0) {
      int error = errno;
      ::close(fd);
      throw_errno("cannot write", path, error);
    }
    content.remove_prefix(static_cast<size_t>(wrote));
  }
  if (::close(fd) != 0) throw_errno("cannot write", path, errno);  // NFS reports a full disk as late as this
}

void copy_whole_file(const std::filesystem::path& from, const std::filesystem::path& to) {
  Fd source;
  int error;
  if (auto why = open_regular(from, 0, source, error); !why.empty())
    throw_errno("cannot copy: " + from.string() + " " + why, from, error ? error : EINVAL);
  struct stat info {};
  ::fstat(source.fd, &info);
  Fd target;
  target.fd = ::open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, info.st_mode & 0777);
  if (target.fd < 0) throw_errno("cannot create", to, errno);
  bool kernel_copy = true;  // copy_file_range: no pass through user space (a server-side copy on NFS 4.2)
  std::string buffer;
  for (;;) {
    ssize_t copied;
    if (kernel_copy) {
      copied = ::copy_file_range(source.fd, nullptr, target.fd, nullptr, 1 << 30, 0);
      if (copied < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
        kernel_copy = false;  // not between these filesystems: plain reads and writes
        continue;
      }
    } else {
      buffer.resize(1 << 20);
      copied = ::read(source.fd, buffer.data(), buffer.size());
      for (ssize_t written = 0; copied > 0 && written < copied;) {
        ssize_t wrote = ::write(target.fd, buffer.data() + written, static_cast<size_t>(copied - written));
        if (wrote < 0 && errno == EINTR) continue;
        if (wrote < 0) throw_errno("cannot write", to, errno);
        written += wrote;
      }
    }
    if (copied < 0 && errno == EINTR) continue;
    if (copied < 0) throw_errno("cannot copy " + from.string() + " to", to, errno);
    if (copied == 0) break;
  }
  const int closed = ::close(target.fd);
  target.fd = -1;
  if (closed != 0) throw_errno("cannot write", to, errno);
}

void fail_writing(const std::filesystem::filesystem_error& error, const std::filesystem::path& where) {
  if (error.code().value() == ENOSPC || error.code().value() == EDQUOT)
    fail_environment("no space left on " + where.string() + " (" + error.code().message() + " writing " +
                     error.path1().string() + ")");
  throw error;
}

}  // namespace archbuild
