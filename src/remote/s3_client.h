#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "remote/http_transport.h"
#include "remote/s3_settings.h"

namespace archbuild {

// A write that happens only if the object is absent (If-None-Match: *) or
// still the version read before (If-Match: ETAG): S3's conditional writes,
// which make a lock object and read-modify-write of a page safe between
// pushers on different machines.
struct WriteCondition {
  enum class Kind { always, absent, unchanged } kind = Kind::always;
  std::string etag;
  static WriteCondition if_absent() { return {Kind::absent, {}}; }
  static WriteCondition if_unchanged(std::string etag) { return {Kind::unchanged, std::move(etag)}; }
};

struct S3Object {
  std::string path;  // relative to the location's prefix
  uint64_t size = 0;
  std::string etag;
  std::string last_modified;  // ISO 8601 in a listing; HTTP's date form from head()
  std::string sha256;         // the x-amz-meta-sha256 put_file records (head() only)
};

struct RemoteText {
  std::string text;
  std::string etag;
};

// The S3 operations a remote cache needs, on paths inside one s3:// location.
// A refused signature or permission is UserError(environment) naming the
// object and where the credentials came from; a missing bucket is bad input.
class S3Client {
 public:
  S3Client(S3Settings settings, S3Location location, HttpTransport& transport);

  // False when the condition did not hold (HTTP 412): nothing was written.
  bool put_text(const std::string& path, const std::string& text, const std::string& content_type,
                const WriteCondition& condition = {});
  // The payload's sha256 is signed (x-amz-content-sha256), so the server
  // refuses bytes that changed on the way, and kept as the object's
  // x-amz-meta-sha256, so head() tells what it holds without a download.
  bool put_file(const std::string& path, const std::filesystem::path& file, const std::string& sha256,
                const std::string& content_type, const WriteCondition& condition = {});
  // nullopt when the object is absent; a text over `cap` bytes is refused.
  // `even_when_interrupted`: sent after Ctrl-C too (a lock released on the way out).
  std::optional<RemoteText> get_text(const std::string& path, uint64_t cap, bool even_when_interrupted = false);
  // False when the object is absent.
  // At most `max_bytes` (the size its listing gave): more ends the download
  // as bad input, the partial file removed.
  bool get_file(const std::string& path, const std::filesystem::path& file, uint64_t max_bytes = 64ull << 30);
  std::optional<S3Object> head(const std::string& path);
  // Every object under `path_prefix` (all pages of ListObjectsV2).
  std::vector<S3Object> list(const std::string& path_prefix);
  // The "directories" right under `path_prefix` ("store/" -> "store/KEY/").
  std::vector<std::string> list_dirs(const std::string& path_prefix);
  // Absent objects are not an error.
  void remove(const std::string& path, bool even_when_interrupted = false);

  std::string url(const std::string& path) const;
  const S3Location& location() const { return location_; }
  const S3Settings& settings() const { return settings_; }

 private:
  HttpResponse send(HttpRequest request, const std::string& path, const std::string& payload_sha256);
  [[noreturn]] void refused(const HttpRequest& request, const HttpResponse& response, const std::string& path) const;
  void list_pages(const std::string& path_prefix, bool dirs, std::vector<S3Object>& objects,
                  std::vector<std::string>& prefixes);

  S3Settings settings_;
  S3Location location_;
  HttpTransport& transport_;
};

// The transport S3 pushes use: SigV4 with the settings' credentials.
std::unique_ptr<HttpTransport> make_s3_transport(const S3Settings& settings, const HttpPolicy& policy);

}  // namespace archbuild
