#pragma once

#include <cstdio>
#include <functional>
#include <map>
#include <string>

#include "core/regular_file.h"
#include "core/sha256.h"
#include "remote/http_transport.h"

namespace archbuild {

// An in-memory S3 behind the HttpTransport interface: PUT (with If-None-Match
// and If-Match), GET, HEAD, DELETE and ListObjectsV2, for path-style URLs of
// one endpoint. `before_put` runs before each PUT: a test's way to have
// "another pusher" change an object between a read and a write.
class FakeS3 : public HttpTransport {
 public:
  struct Object {
    std::string body, etag, sha256;
    int modified = 0;  // the second it was written, on the fake's clock
  };
  std::map<std::string, Object> objects;  // "BUCKET/KEY"
  std::function<void(const std::string& key)> before_put;
  std::function<void(const HttpRequest&)> on_request;  // sees every request as sent
  int puts = 0;
  int requests = 0;
  int clock = 0;                   // one second per write
  bool ignore_conditions = false;  // a server without conditional writes
  bool ignore_if_match = false;    // one that honours If-None-Match only

  void set(const std::string& key, const std::string& body) {
    objects[key] = {body, "\"" + sha256_hex(body).substr(0, 32) + "\"", "", ++clock};
  }

  HttpResponse send(const HttpRequest& request) override {
    ++requests;
    if (on_request) on_request(request);
    const auto start = request.url.find('/', request.url.find("//") + 2) + 1;
    auto path = request.url.substr(start);
    HttpResponse response;
    if (auto query = path.find('?'); query != std::string::npos)
      return list(path.substr(0, query), path.substr(query + 1));
    std::string key;
    for (size_t i = 0; i < path.size(); ++i) {
      if (path[i] == '%' && i + 2 < path.size()) {
        key += static_cast<char>(std::stoi(path.substr(i + 1, 2), nullptr, 16));
        i += 2;
      } else {
        key += path[i];
      }
    }
    auto header = [&](const std::string& name) -> std::string {
      for (const auto& line : request.headers)
        if (line.rfind(name + ": ", 0) == 0) return line.substr(name.size() + 2);
      return {};
    };
    auto found = objects.find(key);
    if (request.method == "PUT") {
      ++puts;
      if (before_put) before_put(key);
      found = objects.find(key);
      if (!ignore_conditions && header("If-None-Match") == "*" && found != objects.end())
        return {412, "<Code>PreconditionFailed</Code>", {}};
      if (!ignore_conditions && !ignore_if_match && !header("If-Match").empty() &&
          (found == objects.end() || found->second.etag != header("If-Match")))
        return {412, "<Code>PreconditionFailed</Code>", {}};
      std::string body = request.body;
      if (!request.upload_file.empty()) read_regular_file(request.upload_file, 1 << 30, body);
      set(key, body);
      objects[key].sha256 = header("x-amz-meta-sha256");
      return {200, "", {{"etag", objects[key].etag}}};
    }
    if (found == objects.end()) return {404, "<Code>NoSuchKey</Code>", {}};
    if (request.method == "DELETE") {
      objects.erase(found);
      return {204, "", {}};
    }
    response.status = 200;
    response.headers = {{"etag", found->second.etag},
                        {"content-length", std::to_string(found->second.body.size())},
                        {"x-amz-meta-sha256", found->second.sha256}};
    if (request.method == "GET") {
      if (!request.download_to.empty())
        write_whole_file(request.download_to, found->second.body);
      else
        response.body = found->second.body;
    }
    return response;
  }

 private:
  static std::string listed_time(int second) {
    char text[32];
    std::snprintf(text, sizeof text, "2026-01-01T%02d:%02d:%02d.000Z", second / 3600 % 24, second / 60 % 60,
                  second % 60);
    return text;
  }

  HttpResponse list(const std::string& bucket, const std::string& query) {
    std::string prefix, delimiter;
    for (size_t at = 0; at < query.size();) {
      auto end = query.find('&', at);
      if (end == std::string::npos) end = query.size();
      auto pair = query.substr(at, end - at);
      auto equals = pair.find('=');
      std::string value;
      for (size_t i = equals + 1; i < pair.size(); ++i) {
        if (pair[i] == '%') {
          value += static_cast<char>(std::stoi(pair.substr(i + 1, 2), nullptr, 16));
          i += 2;
        } else {
          value += pair[i];
        }
      }
      if (pair.substr(0, equals) == "prefix") prefix = value;
      if (pair.substr(0, equals) == "delimiter") delimiter = value;
      at = end + 1;
    }
    std::string xml = "<ListBucketResult><IsTruncated>false</IsTruncated>";
    std::string last_common;
    for (const auto& [key, object] : objects) {
      if (key.rfind(bucket + "/" + prefix, 0) != 0) continue;
      auto name = key.substr(bucket.size() + 1);
      if (!delimiter.empty()) {
        auto cut = name.find(delimiter, prefix.size());
        if (cut != std::string::npos) {
          auto common = name.substr(0, cut + 1);
          if (common != last_common) xml += "<CommonPrefixes><Prefix>" + common + "</Prefix></CommonPrefixes>";
          last_common = common;
          continue;
        }
      }
      xml += "<Contents><Key>" + name + "</Key><ETag>" + object.etag + "</ETag><Size>" +
             std::to_string(object.body.size()) + "</Size><LastModified>" + listed_time(object.modified) +
             "</LastModified></Contents>";
    }
    return {200, xml + "</ListBucketResult>", {}};
  }
};

}  // namespace archbuild
