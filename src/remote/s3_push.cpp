#include "remote/s3_push.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cache/build_report.h"
#include "cache/cache_key.h"
#include "cache/provenance.h"
#include "core/error.h"
#include "core/file_lock.h"
#include "core/interrupt.h"
#include "core/log.h"
#include "core/regular_file.h"
#include "remote/remote_lock.h"
#include "remote/s3_bucket_layout.h"
#include "remote/s3_cache_marker.h"
#include "remote/s3_entry_listing.h"
#include "remote/s3_pages.h"

namespace archbuild {

namespace {

constexpr const char* kS3BinaryType = "application/octet-stream";

void pause_after_s3_object(const S3CacheOptions& options) {
  if (options.pause_between_objects.count() > 0) std::this_thread::sleep_for(options.pause_between_objects);
  if (pending_interrupt()) throw UserError(ExitCode::interrupted, "interrupted");
}

struct S3ManifestWheel {
  std::string file, sha256;
  uint64_t size = 0;
};

std::vector<S3ManifestWheel> s3_manifest_wheels(const std::string& text) {
  auto json = nlohmann::json::parse(text, nullptr, false);
  std::vector<S3ManifestWheel> wheels;
  if (!json.is_object()) return wheels;
  try {
    for (const auto& wheel : BuildReport::from_json(json).wheels)
      wheels.push_back({wheel.file, wheel.sha256, wheel.size});
  } catch (const std::exception&) {
  }
  return wheels;
}

// The bucket's entry is whole when key.txt is there and every wheel its
// manifest records is there with that sha256 (the digest put_file keeps).
bool whole_in_s3_bucket(S3Client& bucket, const std::string& hash, std::vector<std::string>* damage) {
  if (!bucket.head(s3_entry_path(hash, kS3KeyFile))) return false;
  auto manifest = bucket.get_text(s3_entry_path(hash, kS3ManifestFile), kMaxManifestBytes);
  std::vector<std::string> problems;
  if (!manifest) problems.push_back("manifest.json is missing");
  auto wheels = manifest ? s3_manifest_wheels(manifest->text) : std::vector<S3ManifestWheel>{};
  if (manifest && wheels.empty()) problems.push_back("manifest.json lists no wheel");
  for (const auto& wheel : wheels) {
    auto object = bucket.head(s3_entry_path(hash, "wheels/" + wheel.file));
    if (!object)
      problems.push_back(wheel.file + ": in manifest.json but missing");
    else if (object->sha256 != wheel.sha256)
      problems.push_back(wheel.file + ": sha256 differs from the manifest's");
  }
  if (damage) *damage = problems;
  return problems.empty();
}

// Uploads the entry's objects, key.txt last.
void upload_s3_entry(S3Client& bucket, const StoreEntry& entry, const std::string& manifest,
                     const std::vector<std::pair<std::string, std::string>>& extra, RemoteLock& lock,
                     const S3CacheOptions& options) {
  for (const auto& wheel : entry.wheels) {
    bucket.put_file(s3_entry_path(entry.hash, "wheels/" + wheel.filename().string()), wheel, local_file_sha256(wheel),
                    kS3BinaryType);
    pause_after_s3_object(options);
  }
  for (const auto& wheel : entry.variants) {
    bucket.put_file(s3_entry_path(entry.hash, "variants/" + wheel.filename().string()), wheel, local_file_sha256(wheel),
                    kS3BinaryType);
    std::string document;
    if (read_regular_file(wheel.string() + ".json", 1 << 20, document).empty())
      bucket.put_text(s3_entry_path(entry.hash, "variants/" + wheel.filename().string() + ".json"), document,
                      kS3JsonType);
    pause_after_s3_object(options);
  }
  for (const auto& [name, text] : extra) bucket.put_text(s3_entry_path(entry.hash, name), text, kS3JsonType);
  bucket.put_text(s3_entry_path(entry.hash, kS3ManifestFile), manifest, kS3JsonType);
  pause_after_s3_object(options);
  if (!lock.renew()) fail_s3_lock_lost(bucket, entry.hash);
  bucket.put_text(s3_entry_path(entry.hash, kS3KeyFile), entry.key_text, "text/plain");
}

// One entry's turn in a push: left as it is (quick), or under its lock.
struct S3EntryTurn {
  bool there = false;  // the entry is in the bucket and listed afterwards
  std::optional<S3EntryLeftAsItIs> left;
};

S3EntryTurn push_s3_entry(const WheelStore& from, S3Client& bucket, const CacheKey& key, const S3CacheOptions& options,
                          const S3NewestHolders* newest, S3PagesSeen& seen, S3PushResult& result) {
  // The source entry is locked while it is read and uploaded: a `cache gc`
  // of the source waits rather than removing it mid-upload.
  FileLock source_lock(from.lock_path(key));
  auto entry = entry_to_push(from, key, result);
  if (!entry) return {};
  // Nothing is written for an entry found whole and listed, so it needs no lock.
  if (newest)
    if (auto left = s3_entry_listed_unchanged(bucket, *entry, *newest, seen)) {
      log::verbose("{}: there and listed; left as it is", bucket.url(s3_entry_path(key.hash)));
      result.present.push_back(key.hash);
      result.listed_wheels += left->links;
      return {true, left};
    }
  RemoteLock lock(bucket, s3_lock_path(key.hash), options.lock_stale_after);
  lock.acquire();
  std::vector<std::string> damage;
  if (whole_in_s3_bucket(bucket, key.hash, &damage)) {
    result.present.push_back(key.hash);
  } else {
    auto manifest = read_own_file(entry->dir / kS3ManifestFile, kMaxManifestBytes);
    if (!manifest) {
      result.gone_from_source.push_back(key.hash);
      return {};
    }
    std::vector<std::pair<std::string, std::string>> extra;
    for (const char* name : {kProvenanceFile, kSbomFile})
      if (auto text = read_own_file(entry->dir / name, kMaxManifestBytes)) extra.emplace_back(name, *text);
    upload_s3_entry(bucket, *entry, *manifest, extra, lock, options);
    if (damage.empty()) {
      result.pushed.push_back(key.hash);
    } else {
      result.repaired.push_back(key.hash);
      for (const auto& problem : damage) result.repairs.push_back(key.hash + ": " + problem);
    }
  }
  if (!lock.renew()) fail_s3_lock_lost(bucket, key.hash);
  result.listed_wheels += list_s3_entry(bucket, key.hash, seen);
  return {true, std::nullopt};
}

}  // namespace

S3PushResult push_to_s3(const WheelStore& from, S3Client& bucket, const S3CacheOptions& options) {
  // Oldest first: a file name two entries share ends up linked to the newest,
  // as in the local index.
  std::vector<CacheKey> pending;
  S3NewestHolders newest;
  for (auto& entry : from.entries()) {
    if (entry.wheels.empty()) continue;
    pending.insert(pending.begin(), {entry.key_text, entry.hash});
    for (const auto* files : {&entry.wheels, &entry.variants})
      for (const auto& file : *files)
        newest.emplace(file.filename().string(), entry.hash);  // entries() is newest first
  }
  claim_s3_prefix(bucket);
  require_s3_conditional_writes(bucket);
  S3PushResult result;
  S3PagesSeen seen;
  // Entries left as they are because a newer entry holds a file name they
  // share, by that entry: when its turn finds it not there (damaged or gone
  // from the source), they go the locked way at once and take the name.
  std::map<std::string, std::vector<std::pair<CacheKey, size_t>>> relying;
  std::set<std::string> relisted;
  InterruptibleScope between_entries;
  for (const auto& key : pending) {
    if (pending_interrupt()) break;
    const auto turn = push_s3_entry(from, bucket, key, options, &newest, seen, result);
    if (!turn.there)
      for (const auto& [reliant, links] : relying[key.hash]) {
        if (!relisted.insert(reliant.hash).second) continue;
        std::erase(result.present, reliant.hash);
        result.listed_wheels -= links;
        push_s3_entry(from, bucket, reliant, options, nullptr, seen, result);
      }
    if (turn.left)
      for (const auto& owner : turn.left->relies_on) relying[owner].emplace_back(key, turn.left->links);
  }
  if (pending_interrupt())
    throw UserError(ExitCode::interrupted, "interrupted: " + std::to_string(result.pushed.size()) + " of " +
                                               std::to_string(pending.size()) + " entries pushed; the index of " +
                                               bucket.location().text() + " lists only whole entries (run it again)");
  return result;
}

}  // namespace archbuild
