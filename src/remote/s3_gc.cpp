#include "remote/s3_gc.h"

#include <algorithm>
#include <exception>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "cache/key_inputs.h"
#include "cache/store_maintenance.h"
#include "cache/wheel_store.h"
#include "core/sha256.h"
#include "remote/remote_lock.h"
#include "remote/s3_bucket_layout.h"
#include "remote/s3_cache_marker.h"
#include "remote/s3_pages.h"

namespace archbuild {

namespace {

using S3ListedEntries = std::map<std::string, S3BucketEntry>;

// A finished entry of the bucket as a StoreEntry (its wheels and variant
// wheels are object paths), or nullopt when its key text is not its name:
// then it is not archbuild's (verify names it), never kept in a group's
// place, never linked.
std::optional<StoreEntry> s3_committed_entry(S3Client& bucket, const std::string& hash, const S3BucketEntry& listed) {
  auto key_text = bucket.get_text(s3_entry_path(hash, kS3KeyFile), kMaxKeyTextBytes);
  if (!key_text || sha256_hex(key_text->text) != hash) return std::nullopt;
  StoreEntry entry;
  entry.hash = hash;
  entry.key_text = key_text->text;
  entry.dir = s3_entry_path(hash);
  try {
    entry.inputs = KeyInputs::parse(entry.key_text);
  } catch (const std::exception&) {
  }
  for (const auto& object : listed.objects) {
    const auto inside = object.path.substr(s3_entry_path(hash).size());
    if (inside.rfind("wheels/", 0) == 0) entry.wheels.push_back(object.path);
    if (inside.rfind("variants/", 0) == 0 && inside.ends_with(".whl")) entry.variants.push_back(object.path);
  }
  return entry;
}

// The finished entries, newest key.txt first (as the local store lists them).
std::vector<StoreEntry> s3_committed_entries(S3Client& bucket, const S3ListedEntries& listed) {
  std::vector<StoreEntry> entries;
  std::map<std::string, std::string> committed;  // hash -> key.txt's last-modified
  for (const auto& [hash, bucket_entry] : listed) {
    if (!bucket_entry.key_file) continue;
    auto entry = s3_committed_entry(bucket, hash, bucket_entry);
    if (!entry) continue;
    committed[hash] = bucket_entry.key_file->last_modified;
    entries.push_back(std::move(*entry));
  }
  std::sort(entries.begin(), entries.end(),
            [&](const auto& a, const auto& b) { return committed[a.hash] > committed[b.hash]; });
  return entries;
}

uint64_t s3_entry_bytes(const S3BucketEntry& listed) {
  uint64_t bytes = 0;
  for (const auto& object : listed.objects) bytes += object.size;
  return bytes;
}

// Unfinished pushes (objects, no key.txt): removed once their lock is free
// or stale, and only if key.txt is still absent then.
S3GcStep remove_unfinished_s3_push(S3Client& bucket, const std::string& hash, const S3BucketEntry& listed, bool dry_run,
                                   const S3CacheOptions& options) {
  S3GcStep step{hash, "unfinished push", s3_entry_bytes(listed), true};
  if (dry_run) return step;
  RemoteLock lock(bucket, s3_lock_path(hash), options.lock_stale_after);
  lock.acquire();
  if (bucket.head(s3_entry_path(hash, kS3KeyFile)))
    step.removed = false;
  else
    for (const auto& object : bucket.list(s3_entry_path(hash)))
      if (is_plain_s3_key(object.path)) bucket.remove(object.path);
  return step;
}

// File name -> the newest kept entry's object of that name: where a link a
// collected entry held goes (as a local gc relinks it).
using S3KeptObjects = std::map<std::string, std::string>;

S3KeptObjects newest_kept_s3_objects(const std::vector<StoreEntry>& entries, const std::vector<StoreEntry>& doomed) {
  std::set<std::string> doomed_hashes;
  for (const auto& entry : doomed) doomed_hashes.insert(entry.hash);
  S3KeptObjects kept_object;
  for (const auto& entry : entries)
    if (!doomed_hashes.count(entry.hash))
      for (const auto* files : {&entry.wheels, &entry.variants})
        for (const auto& file : *files) kept_object.emplace(file.filename().string(), file.string());
  return kept_object;
}

// Each page link into the entry goes to the kept heir of its file name, or
// comes off the page when there is none (or the heir has no sha256 recorded).
void unlink_s3_entry_from_pages(S3Client& bucket, const StoreEntry& entry, const S3KeptObjects& kept_object) {
  std::set<std::string> projects;
  for (const auto& wheel : entry.wheels) projects.insert(s3_wheel_project(wheel.filename().string()));
  for (const auto& wheel : entry.variants) projects.insert(s3_wheel_project(wheel.filename().string()));
  projects.erase("");
  const auto prefix = s3_page_href(s3_entry_path(entry.hash));
  for (const auto& project : projects)
    update_s3_page(bucket, project, [&](S3PageLinks& links) {
      for (auto it = links.begin(); it != links.end();) {
        if (it->second.href.rfind(prefix, 0) != 0) {
          ++it;
          continue;
        }
        auto heir = kept_object.find(it->first);
        auto head = heir == kept_object.end() ? std::nullopt : bucket.head(heir->second);
        if (head && head->sha256.size() == 64) {
          it->second = {s3_page_href(heir->second), head->sha256, it->first};
          ++it;
        } else {
          it = links.erase(it);
        }
      }
      settle_s3_variants_documents(bucket, project, links, {});
    });
}

// Under the entry's lock, and only if its key.txt is still the one listed:
// its links first, then key.txt, then its other objects.
S3GcStep collect_s3_entry(S3Client& bucket, const StoreEntry& entry, const S3BucketEntry& listed,
                          const S3KeptObjects& kept_object, bool dry_run, const S3CacheOptions& options) {
  S3GcStep step{entry.hash, gc_group(entry), s3_entry_bytes(listed), true};
  if (dry_run) return step;
  RemoteLock lock(bucket, s3_lock_path(entry.hash), options.lock_stale_after);
  lock.acquire();
  auto now = bucket.head(s3_entry_path(entry.hash, kS3KeyFile));
  if (!now || now->etag != listed.key_file->etag) {
    step.removed = false;
    return step;
  }
  unlink_s3_entry_from_pages(bucket, entry, kept_object);
  if (!lock.renew()) fail_s3_lock_lost(bucket, entry.hash);
  bucket.remove(s3_entry_path(entry.hash, kS3KeyFile));
  for (const auto& object : listed.objects) bucket.remove(object.path);
  return step;
}

}  // namespace

std::vector<S3GcStep> gc_s3(S3Client& bucket, size_t keep, bool dry_run, const S3CacheOptions& options,
                            const std::function<void(const S3GcStep&)>& on_step) {
  require_s3_cache_marker(bucket);
  const auto listed = list_s3_entries(bucket);
  const auto entries = s3_committed_entries(bucket, listed);
  std::vector<S3GcStep> steps;
  auto record = [&](S3GcStep step) {
    if (on_step) on_step(step);
    steps.push_back(std::move(step));
  };
  for (const auto& [hash, bucket_entry] : listed)
    if (!bucket_entry.key_file) record(remove_unfinished_s3_push(bucket, hash, bucket_entry, dry_run, options));
  const auto doomed = entries_to_collect(entries, keep);
  const auto kept_object = newest_kept_s3_objects(entries, doomed);
  for (const auto& entry : doomed)
    record(collect_s3_entry(bucket, entry, listed.at(entry.hash), kept_object, dry_run, options));
  return steps;
}

}  // namespace archbuild
