#include "remote/s3_client.h"

#include <set>

#include "core/error.h"
#include "core/sha256.h"

namespace archbuild {

namespace {

constexpr const char* kEmptySha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

std::string xml_decode(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '&') {
      out += text[i];
      continue;
    }
    auto end = text.find(';', i);
    if (end == std::string::npos) {
      out += text.substr(i);
      break;
    }
    const auto entity = text.substr(i + 1, end - i - 1);
    if (entity == "amp")
      out += '&';
    else if (entity == "lt")
      out += '<';
    else if (entity == "gt")
      out += '>';
    else if (entity == "quot")
      out += '"';
    else if (entity == "apos")
      out += '\'';
    else if (entity.size() > 1 && entity[0] == '#') {
      const bool hex = entity[1] == 'x';
      const auto digits = entity.substr(hex ? 2 : 1);
      char* end_of_number = nullptr;
      const unsigned long code = std::strtoul(digits.c_str(), &end_of_number, hex ? 16 : 10);
      if (code > 0 && code < 0x80 && end_of_number && !*end_of_number) out += static_cast<char>(code);
    } else {
      out += text.substr(i, end - i + 1);
    }
    i = end;
  }
  return out;
}

// The text of each <tag>...</tag> in `xml` from `from`, in order (S3's list
// answers are flat: no element nests inside one of the same name).
std::vector<std::string> xml_elements(const std::string& xml, const std::string& tag) {
  std::vector<std::string> found;
  const auto open = "<" + tag + ">", close = "</" + tag + ">";
  for (size_t at = xml.find(open); at != std::string::npos; at = xml.find(open, at)) {
    at += open.size();
    auto end = xml.find(close, at);
    if (end == std::string::npos) break;
    found.push_back(xml.substr(at, end - at));
    at = end + close.size();
  }
  return found;
}

std::string first_element(const std::string& xml, const std::string& tag) {
  auto found = xml_elements(xml, tag);
  return found.empty() ? std::string() : xml_decode(found.front());
}

std::string condition_header(const WriteCondition& condition) {
  switch (condition.kind) {
    case WriteCondition::Kind::absent: return "If-None-Match: *";
    case WriteCondition::Kind::unchanged: return "If-Match: " + condition.etag;
    default: return {};
  }
}

}  // namespace

S3Client::S3Client(S3Settings settings, S3Location location, HttpTransport& transport)
    : settings_(std::move(settings)), location_(std::move(location)), transport_(transport) {}

std::string S3Client::url(const std::string& path) const {
  return s3_object_url(settings_, location_, location_.key(path));
}

HttpResponse S3Client::send(HttpRequest request, const std::string& path, const std::string& payload_sha256) {
  request.headers.push_back("x-amz-content-sha256: " + payload_sha256);
  if (!settings_.session_token.empty()) request.headers.push_back("x-amz-security-token: " + settings_.session_token);
  auto response = transport_.send(request);
  if (response.status == 401 || response.status == 403) refused(request, response, path);
  if (response.status == 404 && http_error_summary(response).rfind("NoSuchBucket", 0) == 0)
    fail_bad_input("bucket '" + location_.bucket + "' does not exist at " + settings_.endpoint + " (" +
                   location_.text() + ")");
  return response;
}

void S3Client::refused(const HttpRequest& request, const HttpResponse& response, const std::string& path) const {
  fail_environment("S3 refused " + request.method + " " + location_.text() + (path.empty() ? "" : "/" + path) +
                   ": HTTP " + std::to_string(response.status) + " " + http_error_summary(response) +
                   " (access key from " + settings_.credentials_from + ", region " + settings_.region + ", endpoint " +
                   settings_.endpoint + ")");
}

namespace {
[[noreturn]] void unexpected(const HttpRequest& request, const HttpResponse& response) {
  fail_environment(request.method + " " + request.url + ": HTTP " + std::to_string(response.status) + " " +
                   http_error_summary(response));
}
}  // namespace

bool S3Client::put_text(const std::string& path, const std::string& text, const std::string& content_type,
                        const WriteCondition& condition) {
  HttpRequest request{.method = "PUT", .url = url(path), .headers = {"Content-Type: " + content_type}, .body = text};
  if (auto header = condition_header(condition); !header.empty()) request.headers.push_back(header);
  auto response = send(request, path, sha256_hex(text));
  if (response.status == 412) return false;
  if (response.status / 100 != 2) unexpected(request, response);
  return true;
}

bool S3Client::put_file(const std::string& path, const std::filesystem::path& file, const std::string& sha256,
                        const std::string& content_type, const WriteCondition& condition) {
  HttpRequest request{.method = "PUT",
                      .url = url(path),
                      .headers = {"Content-Type: " + content_type, "x-amz-meta-sha256: " + sha256}};
  request.upload_file = file;
  if (auto header = condition_header(condition); !header.empty()) request.headers.push_back(header);
  auto response = send(request, path, sha256);
  if (response.status == 412) return false;
  if (response.status / 100 != 2) unexpected(request, response);
  return true;
}

std::optional<RemoteText> S3Client::get_text(const std::string& path, uint64_t cap, bool even_when_interrupted) {
  HttpRequest request{.method = "GET", .url = url(path)};
  request.max_body_bytes = cap;
  request.even_when_interrupted = even_when_interrupted;
  auto response = send(request, path, kEmptySha256);
  if (response.status == 404) return std::nullopt;
  if (response.status / 100 != 2) unexpected(request, response);
  if (response.body.size() > cap)
    fail_bad_input(location_.text() + "/" + path + " is " + std::to_string(response.body.size()) +
                   " bytes, more than archbuild writes there");
  return RemoteText{std::move(response.body), response.header("etag")};
}

bool S3Client::get_file(const std::string& path, const std::filesystem::path& file, uint64_t max_bytes) {
  HttpRequest request{.method = "GET", .url = url(path)};
  request.download_to = file;
  request.max_download_bytes = max_bytes;
  auto response = send(request, path, kEmptySha256);
  if (response.status == 404) return false;
  if (response.status / 100 != 2) unexpected(request, response);
  return true;
}

std::optional<S3Object> S3Client::head(const std::string& path) {
  HttpRequest request{.method = "HEAD", .url = url(path)};
  auto response = send(request, path, kEmptySha256);
  if (response.status == 404) return std::nullopt;
  if (response.status / 100 != 2) unexpected(request, response);
  S3Object object{path, 0, response.header("etag"), response.header("last-modified"),
                  response.header("x-amz-meta-sha256")};
  try {
    object.size = std::stoull(response.header("content-length"));
  } catch (const std::exception&) {
  }
  return object;
}

void S3Client::list_pages(const std::string& path_prefix, bool dirs, std::vector<S3Object>& objects,
                          std::vector<std::string>& prefixes) {
  const auto key_prefix = location_.key(path_prefix);
  const auto strip = location_.prefix.empty() ? 0 : location_.prefix.size() + 1;
  std::string token;
  std::set<std::string> tokens_seen;
  do {
    // SigV4 signs the query sorted by name, which libcurl takes as written.
    std::string query;
    if (!token.empty()) query += "continuation-token=" + s3_uri_encode(token, false) + "&";
    if (dirs) query += "delimiter=%2F&";
    query += "list-type=2&prefix=" + s3_uri_encode(key_prefix, false);
    HttpRequest request{.method = "GET", .url = s3_bucket_url(settings_, location_) + "?" + query};
    auto response = send(request, path_prefix, kEmptySha256);
    if (response.status / 100 != 2) unexpected(request, response);
    for (const auto& contents : xml_elements(response.body, "Contents")) {
      S3Object object;
      const auto key = first_element(contents, "Key");
      if (key.size() < strip) continue;
      object.path = key.substr(strip);
      object.etag = first_element(contents, "ETag");
      object.last_modified = first_element(contents, "LastModified");
      try {
        object.size = std::stoull(first_element(contents, "Size"));
      } catch (const std::exception&) {
      }
      objects.push_back(std::move(object));
    }
    for (const auto& common : xml_elements(response.body, "CommonPrefixes")) {
      const auto prefix = first_element(common, "Prefix");
      if (prefix.size() >= strip) prefixes.push_back(prefix.substr(strip));
    }
    const bool truncated = first_element(response.body, "IsTruncated") == "true";
    token = truncated ? first_element(response.body, "NextContinuationToken") : std::string();
    // A listing that never ends (a token given twice, a truncated page
    // without one) is the server's fault: said, not followed forever.
    constexpr size_t kMostPages = 10000;  // 10 million keys: far beyond a wheel cache, within memory
    if (truncated && tokens_seen.size() >= kMostPages)
      fail_environment("the listing of " + url(path_prefix) + " goes on past " + std::to_string(kMostPages) +
                       " pages: archbuild stops there (a server that never ends its listing?)");
    if (truncated && (token.empty() || !tokens_seen.insert(token).second))
      fail_environment("the listing of " + url(path_prefix) + " does not end: the server says page " +
                       std::to_string(tokens_seen.size() + 1) + " is truncated and " +
                       (token.empty() ? "gives no continuation token" : "repeats a continuation token it gave before"));
  } while (!token.empty());
}

std::vector<S3Object> S3Client::list(const std::string& path_prefix) {
  std::vector<S3Object> objects;
  std::vector<std::string> prefixes;
  list_pages(path_prefix, false, objects, prefixes);
  return objects;
}

std::vector<std::string> S3Client::list_dirs(const std::string& path_prefix) {
  std::vector<S3Object> objects;
  std::vector<std::string> prefixes;
  list_pages(path_prefix, true, objects, prefixes);
  return prefixes;
}

void S3Client::remove(const std::string& path, bool even_when_interrupted) {
  HttpRequest request{.method = "DELETE", .url = url(path)};
  request.even_when_interrupted = even_when_interrupted;
  auto response = send(request, path, kEmptySha256);
  if (response.status / 100 != 2 && response.status != 404) unexpected(request, response);
}

std::unique_ptr<HttpTransport> make_s3_transport(const S3Settings& settings, const HttpPolicy& policy) {
  HttpAuth auth{HttpAuth::Kind::aws_sigv4, settings.access_key, settings.secret_key,
                "aws:amz:" + settings.region + ":s3"};
  return make_curl_transport(std::move(auth), policy);
}

}  // namespace archbuild
