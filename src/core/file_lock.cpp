#include "core/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "core/error.h"
#include "core/log.h"

namespace archbuild {

FileLock::FileLock(const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  // O_NOFOLLOW: a link planted at the lock path is refused, not followed to
  // create or lock a file elsewhere; O_NONBLOCK: a FIFO there opens at once.
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    const int error = errno;
    if (error == ELOOP)
      fail_bad_input("lock file " + path.string() + " is a symbolic link: archbuild follows no link to a lock file");
    if (error == EISDIR || error == ENAMETOOLONG || error == ENOTDIR)
      fail_bad_input("cannot create lock file " + path.string() + ": " + std::strerror(error));
    fail_environment("cannot create lock file " + path.string() + ": " + std::strerror(error));
  }
  struct stat info {};
  if (::fstat(fd_, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    fail_bad_input("lock file " + path.string() + " is not a regular file (" +
                   (S_ISFIFO(info.st_mode)   ? "a FIFO"
                    : S_ISSOCK(info.st_mode) ? "a socket"
                                             : "not a file archbuild made") +
                   "): remove it");
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) {
    log::verbose("lock {}: taken", path.string());
    return;
  }
  waited_ = true;
  // Said before the wait: a run that seems stuck shows what it waits for.
  log::verbose("lock {}: held by another build or process, waiting", path.string());
  const auto started = std::chrono::steady_clock::now();
  int locked;
  while ((locked = ::flock(fd_, LOCK_EX)) != 0 && errno == EINTR) {
  }
  if (locked == 0)
    log::verbose("lock {}: taken after waiting {:.1f} s", path.string(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  if (locked != 0) {
    const int error = errno;
    ::close(fd_);
    fd_ = -1;
    fail_environment("cannot lock " + path.string() + ": " + std::strerror(error));
  }
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace archbuild
