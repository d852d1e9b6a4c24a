#pragma once

#include "remote/s3_client.h"

namespace archbuild {

// The marker object (.archbuild-cache) claims a prefix for archbuild: push
// writes only under a prefix it claimed, verify and gc read and delete only
// under one.

// Claims the prefix for a push: the marker is written into an empty prefix
// only (If-None-Match: *), so a prefix holding someone else's objects is
// refused (exit 2) before anything is written.
void claim_s3_prefix(S3Client& bucket);

// Every guarantee between pushers rests on conditional writes. A server that
// ignores If-None-Match would let two pushers both take one lock: found here
// (exit 3), by a conditional write over the marker that must be refused,
// before any entry is written.
void require_s3_conditional_writes(S3Client& bucket);

// For verify and gc: a prefix without archbuild's marker is refused (exit 2).
void require_s3_cache_marker(S3Client& bucket);

}  // namespace archbuild
