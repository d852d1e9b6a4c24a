#include "remote/http_transport.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

#include <curl/curl.h>

#include "core/error.h"
#include "core/interrupt.h"
#include "core/log.h"
#include "core/regular_file.h"
#include "core/secrets.h"
#include "core/strings.h"

namespace archbuild {

std::string HttpResponse::header(const std::string& lowercase_name) const {
  auto found = headers.find(lowercase_name);
  return found == headers.end() ? std::string() : found->second;
}

namespace {

std::string xml_text(const std::string& body, const std::string& tag) {
  auto open = body.find("<" + tag + ">");
  if (open == std::string::npos) return {};
  open += tag.size() + 2;
  auto close = body.find("</" + tag + ">", open);
  return close == std::string::npos ? std::string() : body.substr(open, close - open);
}

struct BodyInMemory {
  std::string* body;
  uint64_t cap;
  bool cut = false;  // keep the start, drop the rest, go on
  bool over = false;
};

size_t collect_body(char* data, size_t size, size_t count, void* target) {
  auto* sink = static_cast<BodyInMemory*>(target);
  if (sink->body->size() + size * count > sink->cap) {
    sink->over = true;
    if (sink->cut) {
      sink->body->append(data, std::min<uint64_t>(size * count, sink->cap - sink->body->size()));
      return size * count;
    }
    return 0;  // ends the transfer: nothing over the cap is held
  }
  sink->body->append(data, size * count);
  return size * count;
}

struct BodyToFile {
  std::FILE* file;
  uint64_t cap;
  uint64_t written = 0;
  bool over = false;
};

size_t write_to_file(char* data, size_t size, size_t count, void* target) {
  auto* sink = static_cast<BodyToFile*>(target);
  if (sink->written + size * count > sink->cap) {
    sink->over = true;
    return 0;  // ends the transfer: an endless answer stops at the cap
  }
  sink->written += size * count;
  return std::fwrite(data, size, count, sink->file) * size;
}

size_t read_from_file(char* data, size_t size, size_t count, void* source) {
  return std::fread(data, size, count, static_cast<std::FILE*>(source));
}

size_t read_nothing(char*, size_t, size_t, void*) { return 0; }

size_t collect_header(char* data, size_t size, size_t count, void* target) {
  std::string line(data, size * count);
  auto colon = line.find(':');
  auto& headers = *static_cast<std::map<std::string, std::string>*>(target);
  if (line.rfind("HTTP/", 0) == 0) headers.clear();  // a new answer (after 100 Continue or a redirect)
  if (colon != std::string::npos) headers[to_lower(trim(line.substr(0, colon)))] = trim(line.substr(colon + 1));
  return size * count;
}

int stop_when_interrupted(void* request, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return pending_interrupt() && !static_cast<const HttpRequest*>(request)->even_when_interrupted ? 1 : 0;
}

struct FileCloser {
  void operator()(std::FILE* file) const {
    if (file) std::fclose(file);
  }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

struct CurlFree {
  void operator()(CURL* handle) const { curl_easy_cleanup(handle); }
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
  void operator()(curl_mime* mime) const { curl_mime_free(mime); }
};

bool retried_status(long status) { return status >= 500 || status == 429; }

class CurlTransport final : public HttpTransport {
 public:
  CurlTransport(HttpAuth auth, HttpPolicy policy) : auth_(std::move(auth)), policy_(policy) {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  }

  HttpResponse send(const HttpRequest& request) override {
    std::string last_problem;
    int pause_ms = policy_.retry_pause_ms;
    for (int attempt = 1; attempt <= std::max(1, policy_.attempts); ++attempt) {
      if (attempt > 1) {
        log::verbose("{} {}: {}; attempt {} of {} in {} ms", request.method, secrets::scrub(request.url), last_problem,
                     attempt, policy_.attempts, pause_ms);
        std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
        pause_ms *= 2;
      }
      const bool stop = !request.even_when_interrupted;
      if (stop && pending_interrupt()) throw UserError(ExitCode::interrupted, "interrupted");
      HttpResponse response;
      auto error = attempt_once(request, response, last_problem);
      if (stop && pending_interrupt()) throw UserError(ExitCode::interrupted, "interrupted");
      if (error) continue;
      log::verbose("{} {} -> {}", request.method, secrets::scrub(request.url), response.status);
      if (!retried_status(response.status)) return response;
      last_problem = "HTTP " + std::to_string(response.status) + " (" + http_error_summary(response) + ")";
    }
    fail_environment(request.method + " " + secrets::scrub(request.url) + ": " + last_problem + ", " +
                     std::to_string(std::max(1, policy_.attempts)) + " attempts");
  }

 private:
  // True when the attempt failed before an answer (problem says why).
  bool attempt_once(const HttpRequest& request, HttpResponse& response, std::string& problem) {
    std::unique_ptr<CURL, CurlFree> handle(curl_easy_init());
    if (!handle) fail_environment("libcurl could not start a transfer");
    CURL* curl = handle.get();
    std::unique_ptr<curl_slist, CurlFree> headers;
    for (const auto& header : request.headers) {
      auto* appended = curl_slist_append(headers.get(), header.c_str());
      headers.release();
      headers.reset(appended);
    }
    curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, static_cast<long>(policy_.timeout_seconds));
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, static_cast<long>(policy_.timeout_seconds));
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, stop_when_interrupted);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &request);
    // The path as archbuild wrote it: curl must not fold "/../" into another object's name.
    curl_easy_setopt(curl, CURLOPT_PATH_AS_IS, 1L);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, collect_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &response.headers);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    if (auth_.kind == HttpAuth::Kind::aws_sigv4) {
      curl_easy_setopt(curl, CURLOPT_AWS_SIGV4, auth_.sigv4_scope.c_str());
      curl_easy_setopt(curl, CURLOPT_USERNAME, auth_.user.c_str());
      curl_easy_setopt(curl, CURLOPT_PASSWORD, auth_.password.c_str());
    } else if (auth_.kind == HttpAuth::Kind::basic) {
      curl_easy_setopt(curl, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
      curl_easy_setopt(curl, CURLOPT_USERNAME, auth_.user.c_str());
      curl_easy_setopt(curl, CURLOPT_PASSWORD, auth_.password.c_str());
    }

    File upload, download;
    BodyInMemory in_memory{&response.body, request.max_body_bytes, request.cut_body_at_cap};
    BodyToFile to_file{nullptr, request.max_download_bytes};
    std::unique_ptr<curl_mime, CurlFree> mime;
    if (request.method == "HEAD") {
      curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
    } else if (request.method == "PUT") {
      curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
      if (!request.upload_file.empty()) {
        upload.reset(std::fopen(request.upload_file.c_str(), "rb"));
        if (!upload) fail_environment("cannot read " + request.upload_file.string() + " to upload it");
        std::error_code ec;
        auto size = std::filesystem::file_size(request.upload_file, ec);
        curl_easy_setopt(curl, CURLOPT_READFUNCTION, read_from_file);
        curl_easy_setopt(curl, CURLOPT_READDATA, upload.get());
        curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(ec ? 0 : size));
      } else {
        // A string body: read through a memory stream.
        if (!request.body.empty()) {
          upload.reset(fmemopen(const_cast<char*>(request.body.data()), request.body.size(), "rb"));
          if (!upload)
            fail_environment("cannot stage the body of PUT " + secrets::scrub(request.url) + " (" +
                             std::strerror(errno) + ")");
        }
        curl_easy_setopt(curl, CURLOPT_READFUNCTION, upload ? read_from_file : read_nothing);
        curl_easy_setopt(curl, CURLOPT_READDATA, upload.get());
        curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
      }
    } else if (request.method == "POST" && request.form) {
      mime.reset(curl_mime_init(curl));
      for (const auto& [name, value] : request.form->fields) {
        auto* part = curl_mime_addpart(mime.get());
        curl_mime_name(part, name.c_str());
        curl_mime_data(part, value.c_str(), value.size());
      }
      auto* part = curl_mime_addpart(mime.get());
      curl_mime_name(part, request.form->file_field.c_str());
      if (curl_mime_filedata(part, request.form->file.c_str()) != CURLE_OK)
        fail_environment("cannot read " + request.form->file.string() + " to upload it");
      curl_mime_type(part, "application/octet-stream");
      curl_easy_setopt(curl, CURLOPT_MIMEPOST, mime.get());
    } else if (request.method != "GET") {
      curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
      if (request.method == "POST") curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.c_str());
    }
    if (!request.download_to.empty()) {
      try {
        download.reset(open_output_stream(request.download_to));  // never through a symbolic link
      } catch (const std::filesystem::filesystem_error& error) {
        fail_writing(error, request.download_to.parent_path());
      }
      to_file.file = download.get();
      curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, write_to_file);
      curl_easy_setopt(curl, CURLOPT_WRITEDATA, &to_file);
    } else {
      curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect_body);
      curl_easy_setopt(curl, CURLOPT_WRITEDATA, &in_memory);
    }
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers.get());
    log::debug("{} {}", request.method, secrets::scrub(request.url));
    CURLcode code = curl_easy_perform(curl);
    if (download && (std::fflush(download.get()) != 0 || std::ferror(download.get())) && code == CURLE_OK)
      fail_environment("cannot write " + request.download_to.string() + " (a full disk?)");
    if (to_file.over) {
      download.reset();
      ::unlink(request.download_to.c_str());
      fail_bad_input(request.method + " " + secrets::scrub(request.url) + ": the answer is over " +
                     std::to_string(request.max_download_bytes) + " bytes, more than it can hold (stopped there)");
    }
    if (in_memory.over && !in_memory.cut)
      fail_bad_input(request.method + " " + secrets::scrub(request.url) + ": the answer is over " +
                     std::to_string(request.max_body_bytes) + " bytes, more than archbuild reads from there");
    if (code != CURLE_OK) {
      problem = curl_easy_strerror(code);
      return true;
    }
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
    return false;
  }

  HttpAuth auth_;
  HttpPolicy policy_;
};

}  // namespace

void check_http_url(const std::string& url, const std::string& what) {
  const bool scheme = url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0;
  const auto rest = scheme ? url.substr(url.find("//") + 2) : std::string();
  const auto host = rest.substr(0, rest.find_first_of("/?#"));
  bool plain = scheme && !host.empty();
  for (unsigned char c : url)
    if (c <= 0x20 || c == 0x7f || c == '"' || c == '\'' || c == '\\' || c == '<' || c == '>') plain = false;
  if (!plain) fail_bad_input(what + " '" + secrets::scrub(url) + "' is not a plain http(s)://HOST/... URL");
  // A password may hold '/', '?' or '#' (people do not encode them): the
  // secrets' own reading of userinfo decides, not the host part alone.
  if (secrets::scrub(url) != url)
    fail_bad_input(what + " '" + secrets::scrub(url) +
                   "' carries credentials: give them through the environment or a file instead (docs/PUBLISHING.md)");
}

std::string http_error_summary(const HttpResponse& response) {
  // The server's words, as one line of plain text (strings.h printable()).
  auto code = xml_text(response.body, "Code");
  if (!code.empty()) {
    auto message = xml_text(response.body, "Message");
    return printable(message.empty() ? code : code + ": " + message).substr(0, 500);
  }
  // An HTML error page (pypiserver, devpi, a proxy): its title says it.
  auto title = xml_text(response.body, "title");
  if (!title.empty()) return printable(trim(title)).substr(0, 500);
  std::string text = trim(response.body.substr(0, 200));
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text.empty() ? "no explanation in the answer" : printable(text);
}

std::unique_ptr<HttpTransport> make_curl_transport(HttpAuth auth, HttpPolicy policy) {
  return std::make_unique<CurlTransport>(std::move(auth), policy);
}

}  // namespace archbuild
