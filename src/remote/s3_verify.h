#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "core/ed25519.h"
#include "remote/s3_client.h"

namespace archbuild {

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

}  // namespace archbuild
