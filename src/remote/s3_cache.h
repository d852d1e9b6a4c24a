#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "cache/cache_push.h"
#include "cache/wheel_store.h"
#include "core/ed25519.h"
#include "remote/s3_client.h"

namespace archbuild {

// A shared cache in a bucket, under s3://BUCKET/PREFIX:
//   .archbuild-cache                 claims the prefix (written first, if absent)
//   store/KEY/...                    an entry as the local store holds it; key.txt written last
//   simple/index.html                the PEP 503 root page
//   simple/PROJECT/index.html        links to ../../store/KEY/wheels/NAME#sha256=...
//   simple/PROJECT/NAME-VER-variants.json  the variants document of that version's variant wheels
//   locks/KEY                        the entry's lock while it is pushed, listed or removed
// Object storage has no links, so the pages link the store's objects
// themselves: nothing is stored twice. Serve it over HTTP through a server
// that maps a directory URL to its index.html (docs/PUBLISHING.md).
struct S3CacheOptions {
  std::chrono::seconds lock_stale_after{600};
  // Between two objects of an entry (a push's test hook, ARCHBUILD_PUSH_PAUSE_MS).
  std::chrono::milliseconds pause_between_objects{0};
};

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

struct S3VerifyResult {
  size_t entries = 0;
  std::vector<std::string> problems;    // "KEY: problem" or "simple/...: problem"
  std::vector<std::string> unfinished;  // entries without key.txt: a push killed or under way (gc removes them)
  // Wheels of a finished entry that no page links yet: a push killed after
  // key.txt and before its links (the next push of that entry lists them).
  std::vector<std::string> unlisted;
  // Variants documents that claim only vouched variants, linked with an
  // older digest: a push killed between the document and its page (the
  // next push relinks them). Any other digest mismatch is a problem.
  std::vector<std::string> stale_links;
};
// Downloads every entry into `scratch` and checks it as `cache verify` checks
// a local entry (digests, RECORD, provenance, signatures with `trusted`);
// then every page link: it names an entry object there, with that sha256;
// and every entry's wheels are linked.
S3VerifyResult verify_s3(S3Client& bucket, const std::filesystem::path& scratch, const std::vector<Ed25519Key>& trusted,
                         bool require_signature);

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

// http(s)://.../simple: the index URL readers use, from `public_url` (a
// server in front of the bucket) or else the bucket's own URL.
std::string s3_index_url(const S3Client& bucket, const std::string& public_url);

}  // namespace archbuild
