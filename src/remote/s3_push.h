#pragma once

#include <cstddef>

#include "cache/cache_push.h"
#include "cache/wheel_store.h"
#include "remote/s3_cache_options.h"
#include "remote/s3_client.h"

namespace archbuild {

struct S3PushResult : PushOutcome {
  size_t listed_wheels = 0;  // links written or confirmed on the pages
};

// Each source entry that the bucket lacks (or holds damaged) is uploaded
// under its lock: wheels, variant wheels, provenance, SBOM and manifest,
// then key.txt, which makes it an entry; then, still under the lock, its
// links go onto its projects' pages, each page rewritten with If-Match on
// the ETag read (a page another pusher changed meanwhile is read again).
// So a reader never sees a link to an object that is not there, two pushers
// never interleave one entry, and none loses another's links. An entry
// found there and listed (from one listing of it and the pages, read once
// per push) is left as it is, lock-free since nothing is written; one there
// but not listed is listed again, so a rerun after a killed push completes.
// A source entry that fails `cache verify`'s checks is never uploaded.
S3PushResult push_to_s3(const WheelStore& from, S3Client& bucket, const S3CacheOptions& options);

}  // namespace archbuild
