#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "remote/s3_client.h"

namespace archbuild {

// A shared cache in a bucket, under s3://BUCKET/PREFIX:
//   .archbuild-cache                 claims the prefix (written first, if absent; remote/s3_cache_marker)
//   store/KEY/...                    an entry as the local store holds it; key.txt written last
//   simple/index.html                the PEP 503 root page
//   simple/PROJECT/index.html        links to ../../store/KEY/wheels/NAME#sha256=...
//   simple/PROJECT/NAME-VER-variants.json  the variants document of that version's variant wheels
//   locks/KEY                        the entry's lock while it is pushed, listed or removed
// Object storage has no links, so the pages link the store's objects
// themselves: nothing is stored twice. Serve it over HTTP through a server
// that maps a directory URL to its index.html (docs/PUBLISHING.md).
// Every key push, verify and gc use is named here, in one place.
inline constexpr const char* kS3KeyFile = "key.txt";
inline constexpr const char* kS3ManifestFile = "manifest.json";
inline constexpr const char* kS3RootPage = "simple/index.html";
inline constexpr uint64_t kMaxS3PageBytes = 16u << 20;
inline constexpr const char* kS3HtmlType = "text/html; charset=utf-8";
inline constexpr const char* kS3JsonType = "application/json";

// store/HASH/INSIDE (store/HASH/ with no `inside`).
std::string s3_entry_path(const std::string& hash, const std::string& inside = "");
std::string s3_page_dir(const std::string& project);   // simple/PROJECT/
std::string s3_page_path(const std::string& project);  // simple/PROJECT/index.html
std::string s3_lock_path(const std::string& hash);     // locks/HASH
// The href a project page links a store object by (readers resolve it back
// the same way).
std::string s3_page_href(const std::string& object_path);

// A key archbuild could have written: segments that are neither empty, '.'
// nor '..', and no control characters. Anything else in store/ is someone
// else's: never fetched, linked or deleted by archbuild.
bool is_plain_s3_key(const std::string& path);

struct S3BucketEntry {
  std::string hash;
  std::optional<S3Object> key_file;
  std::vector<S3Object> objects;
};
// The entries under store/ (a dir named by a sha256), each with its objects;
// `odd` gets the keys under store/ that are not an entry's plain objects.
std::map<std::string, S3BucketEntry> list_s3_entries(S3Client& bucket, std::vector<std::string>* odd = nullptr);

// A local file's sha256; one that cannot be read ends the job (exit 3).
std::string local_file_sha256(const std::filesystem::path& file);

// An entry's lock another pusher took over while this one held it.
[[noreturn]] void fail_s3_lock_lost(S3Client& bucket, const std::string& hash);

// http(s)://.../simple: the index URL readers use, from `public_url` (a
// server in front of the bucket) or else the bucket's own URL.
std::string s3_index_url(const S3Client& bucket, const std::string& public_url);

}  // namespace archbuild
