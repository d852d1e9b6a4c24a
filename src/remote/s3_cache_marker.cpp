#include "remote/s3_cache_marker.h"

#include <string>

#include "core/error.h"

namespace archbuild {

namespace {

constexpr const char* kS3Marker = ".archbuild-cache";
constexpr const char* kS3MarkerText =
    "archbuild shared cache 1\n(archbuild cache push writes store/, simple/ and locks/ here)\n";

bool is_s3_cache_marker(const RemoteText& marker) { return marker.text.rfind("archbuild shared cache 1\n", 0) == 0; }

}  // namespace

void claim_s3_prefix(S3Client& bucket) {
  if (auto marker = bucket.get_text(kS3Marker, 4096)) {
    if (!is_s3_cache_marker(*marker))
      fail_bad_input(bucket.location().text() + "/" + kS3Marker + " is not the marker archbuild writes; refusing " +
                     bucket.location().text());
    return;
  }
  auto objects = bucket.list("");
  for (const auto& object : objects)
    if (object.path != kS3Marker)
      fail_bad_input("refusing " + bucket.location().text() + ": it holds " + bucket.location().text() + "/" +
                     object.path + " and no " + kS3Marker +
                     ", so it is not a shared cache archbuild made; push to an empty or new prefix");
  bucket.put_text(kS3Marker, kS3MarkerText, "text/plain", WriteCondition::if_absent());
}

void require_s3_conditional_writes(S3Client& bucket) {
  const bool none_match_ignored = bucket.put_text(kS3Marker, kS3MarkerText, "text/plain", WriteCondition::if_absent());
  const bool match_ignored = !none_match_ignored &&
                             bucket.put_text(kS3Marker, kS3MarkerText, "text/plain",
                                             WriteCondition::if_unchanged("\"archbuild-no-such-etag\""));
  if (none_match_ignored || match_ignored)
    fail_environment(bucket.settings().endpoint + " ignores conditional writes (a PUT with " +
                     (none_match_ignored ? "If-None-Match: *" : "If-Match on another ETag") +
                     " replaced an existing object): two pushers could not be kept apart there, so archbuild does "
                     "not push to it");
}

void require_s3_cache_marker(S3Client& bucket) {
  auto marker = bucket.get_text(kS3Marker, 4096);
  if (!marker)
    fail_bad_input(bucket.location().text() + " holds no " + kS3Marker +
                   ": it is not a cache `archbuild cache push` made, so archbuild reads and removes nothing there");
  if (!is_s3_cache_marker(*marker))
    fail_bad_input(bucket.location().text() + "/" + kS3Marker + " is not the marker archbuild writes");
}

}  // namespace archbuild
