#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "remote/s3_cache_options.h"
#include "remote/s3_client.h"

namespace archbuild {

struct S3GcStep {
  std::string hash, group;
  uint64_t bytes = 0;
  bool removed = true;  // false: gone or replaced meanwhile
};
// Keeps the newest `keep` entries per project, arch list and machine (as the
// local `cache gc`); for each other one, under its lock: its links come off
// the pages first, then key.txt, then its other objects.
std::vector<S3GcStep> gc_s3(S3Client& bucket, size_t keep, bool dry_run, const S3CacheOptions& options,
                            const std::function<void(const S3GcStep&)>& on_step = {});

}  // namespace archbuild
