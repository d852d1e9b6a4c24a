#include "remote/s3_bucket_layout.h"

#include <string_view>

#include "core/error.h"
#include "core/regular_file.h"
#include "remote/s3_settings.h"

namespace archbuild {

namespace {

// A project page sits two levels below the prefix: simple/PROJECT/.
constexpr std::string_view kS3PageToRoot = "../../";

bool is_s3_entry_hash(const std::string& text) {
  return text.size() == 64 && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace

std::string s3_entry_path(const std::string& hash, const std::string& inside) { return "store/" + hash + "/" + inside; }
std::string s3_page_dir(const std::string& project) { return "simple/" + project + "/"; }
std::string s3_page_path(const std::string& project) { return s3_page_dir(project) + "index.html"; }
std::string s3_lock_path(const std::string& hash) { return "locks/" + hash; }
std::string s3_page_href(const std::string& object_path) { return std::string(kS3PageToRoot) + object_path; }

bool is_plain_s3_key(const std::string& path) {
  size_t start = 0;
  while (start <= path.size()) {
    auto end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    const auto segment = path.substr(start, end - start);
    if (segment.empty() || segment == "." || segment == "..") return false;
    start = end + 1;
  }
  for (unsigned char c : path)
    if (c < 0x20 || c == 0x7f) return false;
  return true;
}

std::map<std::string, S3BucketEntry> list_s3_entries(S3Client& bucket, std::vector<std::string>* odd) {
  std::map<std::string, S3BucketEntry> entries;
  for (auto& object : bucket.list("store/")) {
    const auto rest = object.path.substr(6);
    const auto slash = rest.find('/');
    if (slash == std::string::npos || !is_s3_entry_hash(rest.substr(0, slash)) || !is_plain_s3_key(object.path)) {
      if (odd) odd->push_back(object.path);
      continue;
    }
    auto& entry = entries[rest.substr(0, slash)];
    entry.hash = rest.substr(0, slash);
    if (rest.substr(slash + 1) == kS3KeyFile) entry.key_file = object;
    entry.objects.push_back(std::move(object));
  }
  return entries;
}

std::string local_file_sha256(const std::filesystem::path& file) {
  std::string digest;
  if (auto why = hash_regular_file(file, digest); !why.empty()) fail_environment(file.string() + " " + why);
  return digest;
}

void fail_s3_lock_lost(S3Client& bucket, const std::string& hash) {
  fail_environment("the lock " + bucket.url(s3_lock_path(hash)) +
                   " was taken over by another pusher (this push stalled past the lock's stale time); nothing of " +
                   hash.substr(0, 12) + " was committed by this push");
}

std::string s3_index_url(const S3Client& bucket, const std::string& public_url) {
  if (!public_url.empty()) {
    auto url = public_url;
    while (!url.empty() && url.back() == '/') url.pop_back();
    return url;
  }
  auto base = s3_bucket_url(bucket.settings(), bucket.location());
  if (!bucket.location().prefix.empty()) base += "/" + s3_uri_encode(bucket.location().prefix, true);
  return base + "/simple";
}

}  // namespace archbuild
