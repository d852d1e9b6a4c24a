#include "core/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "core/sha256.h"

namespace archbuild {

namespace {

// Opens `path` for reading when it is a regular file; else why not, with
// `error` the errno of a failed open (0 otherwise).
std::string open_regular(const std::filesystem::path& path, int extra_flags, UniqueFd& file, int& error) {
  error = 0;
  file.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | extra_flags));
  if (!file) {
    error = errno;
    if (error == ELOOP && (extra_flags & O_NOFOLLOW)) return "is a symbolic link, not a regular file";
    return std::string("cannot be opened: ") + std::strerror(error);
  }
  struct stat info {};
  if (::fstat(file.get(), &info) != 0) return std::string("cannot be examined: ") + std::strerror(errno);
  if (!S_ISREG(info.st_mode))
    return S_ISFIFO(info.st_mode)  ? "is a FIFO, not a regular file"
           : S_ISCHR(info.st_mode) ? "is a character device, not a regular file"
           : S_ISDIR(info.st_mode) ? "is a directory, not a regular file"
                                   : "is not a regular file";
  return {};
}

// "16 MiB", "64 KiB", "100 bytes": a cap as a message says it.
std::string size_text(uint64_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
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
      return "is larger than " + size_text(cap) + ", the most archbuild reads there";
    content.append(buffer, static_cast<size_t>(got));
  }
}

[[noreturn]] void throw_errno(const std::string& what, const std::filesystem::path& path, int error) {
  throw std::filesystem::filesystem_error(what, path, std::error_code(error, std::generic_category()));
}

// Writes all of `content` to `fd`; the errno of a failed write, else 0.
int write_all(int fd, std::string_view content) {
  while (!content.empty()) {
    ssize_t wrote = ::write(fd, content.data(), content.size());
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote < 0) return errno;
    content.remove_prefix(static_cast<size_t>(wrote));
  }
  return 0;
}

// Opens `path` to write (never through a symbolic link), throwing as the
// writers do. O_NONBLOCK only for the open, so a FIFO planted there without
// a reader fails it (ENXIO) instead of blocking; the writes then wait as
// usual (for a slow disk, or a FIFO's reader).
UniqueFd open_for_writing(const std::filesystem::path& path, int flags, mode_t mode) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | flags, mode));
  if (!fd) throw_errno("cannot create", path, errno);
  const int status = ::fcntl(fd.get(), F_GETFL);
  if (status < 0 || ::fcntl(fd.get(), F_SETFL, status & ~O_NONBLOCK) != 0) throw_errno("cannot open", path, errno);
  return fd;
}

// A name no other writer uses, beside the file it stands in for: hidden, and
// short enough for any file name (NAME_MAX 255).
std::string temporary_name_for(const std::filesystem::path& path) {
  static std::atomic<unsigned> counter{0};
  return "." + path.filename().string().substr(0, 160) + ".tmp-" + std::to_string(::getpid()) + "-" +
         std::to_string(counter++);
}

}  // namespace

std::string read_regular_file(const std::filesystem::path& path, uint64_t cap, std::string& content) {
  UniqueFd file;
  int error;
  if (auto why = open_regular(path, 0, file, error); !why.empty()) return why;
  return read_open_file(file.get(), cap, content);
}

std::string hash_regular_file(const std::filesystem::path& path, std::string& hex) {
  UniqueFd file;
  int error;
  if (auto why = open_regular(path, 0, file, error); !why.empty()) return why;
  Sha256 digest;
  char buffer[1 << 16];
  for (;;) {
    ssize_t got = ::read(file.get(), buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return std::string("cannot be read: ") + std::strerror(errno);
    if (got == 0) break;
    digest.update(buffer, static_cast<size_t>(got));
  }
  hex = digest.hex();
  return {};
}

std::optional<std::string> read_own_file(const std::filesystem::path& path, uint64_t cap) {
  UniqueFd file;
  int error;
  std::string content;
  auto why = open_regular(path, O_NOFOLLOW, file, error);
  if (error == ENOENT || error == ENOTDIR) return std::nullopt;  // also an entry a `cache gc` just renamed away
  if (why.empty()) why = read_open_file(file.get(), cap, content);
  if (why.empty()) return content;
  if (error && error != ELOOP) fail_environment(path.string() + " " + why);
  fail_bad_input(path.string() + " " + why + ": archbuild reads back only the regular files it wrote there");
}

void write_whole_file(const std::filesystem::path& path, std::string_view content) {
  auto file = OutputFile::create(path);
  file.write(content);
  file.close();
}

void write_file_atomically(const std::filesystem::path& path, std::string_view content,
                           std::optional<std::filesystem::perms> perms) {
  const auto dir = path.parent_path();
  std::filesystem::path temporary;
  UniqueFd file;
  for (int attempt = 0; !file; ++attempt) {  // another host's process of the same pid on a shared disk: the next name
    temporary = dir / temporary_name_for(path);
    // With `perms` the file is private until they are set, before any byte
    // of a secret's file (a token, a key) is in it.
    file.reset(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, perms ? 0600 : 0644));
    if (!file && (errno != EEXIST || attempt == 100)) throw_errno("cannot create a file beside", path, errno);
  }
  auto fail = [&](const char* what, int error) {
    file.reset();
    ::unlink(temporary.c_str());
    throw_errno(what, path, error);
  };
  if (perms && ::fchmod(file.get(), static_cast<mode_t>(*perms) & 07777) != 0) fail("cannot set the mode of", errno);
  if (int error = write_all(file.get(), content)) fail("cannot write", error);
  if (::fsync(file.get()) != 0) fail("cannot write", errno);  // the data is on disk before the name points at it
  if (::close(file.release()) != 0) fail("cannot write", errno);
  if (::rename(temporary.c_str(), path.c_str()) != 0) fail("cannot rename into place", errno);
}

void place_symlink(const std::filesystem::path& target, const std::filesystem::path& link) {
  std::error_code ec;
  if (std::filesystem::is_symlink(link, ec) && std::filesystem::read_symlink(link, ec) == target) return;
  std::filesystem::path temporary;
  for (int attempt = 0;; ++attempt) {  // another host's process of the same pid on a shared disk: the next name
    temporary = link.parent_path() / temporary_name_for(link);
    if (::symlink(target.c_str(), temporary.c_str()) == 0) break;
    if (errno != EEXIST || attempt == 100) throw_errno("cannot create a link beside", link, errno);
  }
  if (::rename(temporary.c_str(), link.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    throw_errno("cannot rename into place", link, error);
  }
}

void place_needed_symlink(const std::filesystem::path& target, const std::filesystem::path& link) {
  try {
    place_symlink(target, link);
  } catch (const std::filesystem::filesystem_error& error) {
    fail_environment("cannot link " + link.string() + ": " + error.code().message());
  }
}

OutputFile::OutputFile(std::filesystem::path path, int flags)
    : path_(std::move(path)), fd_(open_for_writing(path_, flags, 0644)) {}

OutputFile OutputFile::create(const std::filesystem::path& path) { return OutputFile(path, O_TRUNC); }

OutputFile OutputFile::append(const std::filesystem::path& path) { return OutputFile(path, O_APPEND); }

void OutputFile::write(std::string_view text) {
  if (!fd_) throw_errno("cannot write (closed)", path_, EBADF);
  if (int error = write_all(fd_.get(), text)) throw_errno("cannot write", path_, error);
}

void OutputFile::close() {
  if (!fd_) return;
  if (::close(fd_.release()) != 0)
    throw_errno("cannot write", path_, errno);  // NFS reports a full disk as late as this
}

void copy_whole_file(const std::filesystem::path& from, const std::filesystem::path& to) {
  UniqueFd source;
  int error;
  if (auto why = open_regular(from, 0, source, error); !why.empty())
    throw_errno("cannot copy: " + from.string() + " " + why, from, error ? error : EINVAL);
  struct stat info {};
  ::fstat(source.get(), &info);
  UniqueFd target = open_for_writing(to, O_TRUNC, info.st_mode & 0777);
  bool kernel_copy = true;  // copy_file_range: no pass through user space (a server-side copy on NFS 4.2)
  std::string buffer;
  for (;;) {
    ssize_t copied;
    if (kernel_copy) {
      copied = ::copy_file_range(source.get(), nullptr, target.get(), nullptr, 1 << 30, 0);
      if (copied < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
        kernel_copy = false;  // not between these filesystems: plain reads and writes
        continue;
      }
    } else {
      buffer.resize(1 << 20);
      copied = ::read(source.get(), buffer.data(), buffer.size());
      if (copied > 0)
        if (int failed = write_all(target.get(), {buffer.data(), static_cast<size_t>(copied)}))
          throw_errno("cannot write", to, failed);
    }
    if (copied < 0 && errno == EINTR) continue;
    if (copied < 0) throw_errno("cannot copy " + from.string() + " to", to, errno);
    if (copied == 0) break;
  }
  if (::close(target.release()) != 0) throw_errno("cannot write", to, errno);
}

void fail_writing(const std::filesystem::filesystem_error& error, const std::filesystem::path& where) {
  if (error.code().value() == ENOSPC || error.code().value() == EDQUOT)
    fail_environment("no space left on " + where.string() + " (" + error.code().message() + " writing " +
                     error.path1().string() + ")");
  throw error;
}

std::FILE* open_output_stream(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0)
    throw std::filesystem::filesystem_error("cannot write", path, std::error_code(errno, std::generic_category()));
  std::FILE* stream = ::fdopen(fd, "w");
  if (!stream) {
    const int error = errno;
    ::close(fd);
    throw std::filesystem::filesystem_error("cannot write", path, std::error_code(error, std::generic_category()));
  }
  return stream;
}

}  // namespace archbuild
