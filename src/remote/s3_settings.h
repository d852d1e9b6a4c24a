#pragma once

#include <functional>
#include <optional>
#include <string>

namespace archbuild {

// s3://BUCKET[/PREFIX]: where a remote cache lives in a bucket.
struct S3Location {
  std::string bucket;
  std::string prefix;  // no leading or trailing '/', may be empty
  std::string text() const { return "s3://" + bucket + (prefix.empty() ? "" : "/" + prefix); }
  // The object key of a path inside the cache: PREFIX/PATH.
  std::string key(const std::string& path) const { return prefix.empty() ? path : prefix + "/" + path; }
};

bool is_s3_location(const std::string& text);
// Refuses (exit 2, naming the part) a bucket name S3 does not allow or a
// prefix with empty, '.' or '..' segments.
S3Location parse_s3_location(const std::string& text);

// How to reach and sign for the bucket, resolved as the AWS CLI resolves it:
//   endpoint     AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, `endpoint_url` of the
//                profile in the config file; else AWS's own regional endpoint
//   region       AWS_REGION, AWS_DEFAULT_REGION, `region` of the profile; else us-east-1
//   credentials  AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN),
//                else the profile's in the credentials file, else its config file
//   profile      AWS_PROFILE, else "default"; files AWS_CONFIG_FILE
//                (~/.aws/config) and AWS_SHARED_CREDENTIALS_FILE (~/.aws/credentials)
// A custom endpoint (SeaweedFS, MinIO, Ceph) is addressed path-style
// (ENDPOINT/BUCKET/KEY), AWS's own virtual-host style (BUCKET.s3.REGION...).
struct S3Settings {
  std::string endpoint;  // scheme://host[:port], no trailing '/'
  std::string region;
  bool path_style = true;
  std::string access_key, secret_key, session_token;
  std::string credentials_from;  // "environment", or FILE:LINE, for messages
  std::string profile;
};

using EnvironmentLookup = std::function<std::optional<std::string>(const std::string& name)>;
EnvironmentLookup process_environment();

// No credentials anywhere, or an endpoint that is not http(s)://HOST[:PORT],
// is UserError(bad_input) saying where archbuild looked.
S3Settings resolve_s3_settings(const EnvironmentLookup& environment);

// The object's URL: percent-encoded per path segment, as SigV4 signs it.
std::string s3_object_url(const S3Settings& settings, const S3Location& location, const std::string& key);
// The bucket's URL, for listing.
std::string s3_bucket_url(const S3Settings& settings, const S3Location& location);
// Percent-encoding of everything but RFC 3986's unreserved characters (and
// '/' when keep_slash): the encoding S3's SigV4 canonical form uses.
std::string s3_uri_encode(const std::string& text, bool keep_slash);

}  // namespace archbuild
