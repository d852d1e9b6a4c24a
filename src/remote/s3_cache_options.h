#pragma once

#include <chrono>

namespace archbuild {

// How the jobs that write to a bucket (push, gc) treat its locks.
struct S3CacheOptions {
  std::chrono::seconds lock_stale_after{600};
  // Between two objects of an entry (a push's test hook, ARCHBUILD_PUSH_PAUSE_MS).
  std::chrono::milliseconds pause_between_objects{0};
};

}  // namespace archbuild
