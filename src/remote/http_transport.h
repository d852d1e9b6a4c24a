#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace archbuild {

// One multipart/form-data body: text fields, then one file (the upload API).
struct MultipartForm {
  std::vector<std::pair<std::string, std::string>> fields;
  std::string file_field;
  std::filesystem::path file;
};

struct HttpRequest {
  std::string method = "GET";  // GET, HEAD, PUT, DELETE, POST
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;                  // sent by PUT unless upload_file is set
  std::filesystem::path upload_file;
  std::filesystem::path download_to;  // a GET's body goes here instead of `body`
  std::shared_ptr<const MultipartForm> form;
  // An answer body (in memory) larger than this ends the transfer as bad
  // input: what archbuild reads from a server is capped before it is held.
  uint64_t max_body_bytes = 64ull << 20;
  // Keep the body's first max_body_bytes and drop the rest instead of
  // failing (an upload's answer: its status is what counts).
  bool cut_body_at_cap = false;
  // The same for a body written to `download_to`: what the listing said the
  // object holds, where the caller knows it (a wheel's size).
  uint64_t max_download_bytes = 64ull << 30;
  // Sent even after Ctrl-C: releasing a lock on the way out.
  bool even_when_interrupted = false;
};

struct HttpResponse {
  long status = 0;
  std::string body;                            // empty when downloaded to a file
  std::map<std::string, std::string> headers;  // names lowercased
  std::string header(const std::string& lowercase_name) const;
};

// How requests authenticate. AWS SigV4 signing is libcurl's (CURLOPT_AWS_SIGV4).
struct HttpAuth {
  enum class Kind { none, aws_sigv4, basic } kind = Kind::none;
  std::string user, password;  // access key and secret for SigV4
  std::string sigv4_scope;     // "aws:amz:REGION:s3"
};

struct HttpPolicy {
  // A transfer slower than 1 byte/s for this long, or a connection not made
  // within it, fails the attempt: a stalled server ends the push, never hangs it.
  int timeout_seconds = 60;
  // Attempts per request: connection failures, timeouts, 5xx and 429 are retried
  // with doubling pauses (retry_pause_ms, then twice that, ...).
  int attempts = 4;
  int retry_pause_ms = 500;
};

// The one way archbuild talks HTTP: narrow, so the remote cache and the
// upload API can be tested against a fake as well as against real servers.
class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  // The final answer after retries. A server that stays unreachable, stalls
  // or answers 5xx through every attempt is UserError(environment) naming the
  // URL and what happened; every other status is returned for the caller.
  virtual HttpResponse send(const HttpRequest& request) = 0;
};

// Refuses (exit 2, naming `what`) anything but a plain http(s)://HOST[...]
// URL: no whitespace, quotes or control characters (the URL lands in
// pip.conf and uv.toml lines), no user:password@ (credentials go elsewhere).
void check_http_url(const std::string& url, const std::string& what);

// libcurl, one easy handle per request; `-v` logs each request and answer.
std::unique_ptr<HttpTransport> make_curl_transport(HttpAuth auth, HttpPolicy policy);

// The server's error text for a message: S3's <Code> and <Message>, or the
// start of a plain body, on one line.
std::string http_error_summary(const HttpResponse& response);

}  // namespace archbuild
