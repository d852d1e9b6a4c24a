#pragma once

#include <filesystem>

namespace archbuild {

// An exclusive flock on a lock file, held for the object's lifetime (and
// released by the kernel if the process dies, so a killed build never leaves
// a stale lock). Used per mirror, per cache key and for the wheel index.
// A lock path that is a symbolic link or not a regular file (a FIFO planted
// in a shared cache) is refused with exit 2 naming it; never followed.
class FileLock {
 public:
  explicit FileLock(const std::filesystem::path& path);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  // True when another process held the lock and this one waited for it.
  bool waited() const { return waited_; }

 private:
  int fd_ = -1;
  bool waited_ = false;
};

}  // namespace archbuild
