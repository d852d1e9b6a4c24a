#include "cache/cache_push.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <optional>

#include "cache/provenance.h"
#include "cache/store_maintenance.h"
#include "core/error.h"
#include "core/file_lock.h"
#include "core/interrupt.h"
#include "core/regular_file.h"

namespace archbuild {

namespace {
bool marked(const std::filesystem::path& dest) {
  std::error_code ec;
  auto marker = dest / kSharedCacheMarker;
  auto status = std::filesystem::symlink_status(marker, ec);
  if (!std::filesystem::exists(status)) return false;
  if (!std::filesystem::is_regular_file(status))
    fail_bad_input("cache push: " + marker.string() + " is not the regular file archbuild writes; refusing " +
                   dest.string());
  return true;
}

// DEST becomes archbuild's only while it is empty: the marker is created
// exclusively, as the first thing in it, so racing pushers all see it before
// any store/ another one writes.
void claim_shared_dir(const std::filesystem::path& dest) {
  std::error_code ec;
  std::filesystem::create_directories(dest, ec);  // DEST itself may be a link the user named
  if (!std::filesystem::is_directory(dest, ec)) fail_bad_input("cache push: " + dest.string() + " is not a directory");
  if (marked(dest)) return;
  std::string foreign;
  for (const auto& entry : std::filesystem::directory_iterator(dest))
    if (entry.path().filename() != kSharedCacheMarker) {
      foreign = entry.path().filename().string();
      break;
    }
  const auto marker = dest / kSharedCacheMarker;
  if (foreign.empty()) {
    int fd = ::open(marker.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0) {
      const std::string text =
          "archbuild shared cache 1\n(archbuild cache push writes store/, wheels/, simple/ and index.lock here)\n";
      bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
      ::close(fd);
      if (!written) fail_environment("cannot write " + marker.string());
      return;
    }
    if (errno != EEXIST) fail_environment("cannot create " + marker.string());
  }
  if (marked(dest)) return;  // another pusher claimed it meanwhile
  fail_bad_input("cache push: refusing " + dest.string() + ": it holds " + (dest / foreign).string() + " and no " +
                 kSharedCacheMarker + ", so it is not a shared cache archbuild made; push to an empty or new " +
                 "directory (or, for one an older archbuild pushed to, create " + marker.string() + ")");
}

void refuse_link(const std::filesystem::path& path, bool directory) {
  std::error_code ec;
  auto status = std::filesystem::symlink_status(path, ec);
  if (!std::filesystem::exists(status)) return;
  if (std::filesystem::is_symlink(status))
    fail_bad_input("cache push: " + path.string() + " is a symbolic link: archbuild follows no link out of DEST");
  if (directory != std::filesystem::is_directory(status))
    fail_bad_input("cache push: " + path.string() + " is not what archbuild writes there");
}
}  // namespace

namespace {

// A DEST entry counts as there only when its wheels are its manifest's bytes.
bool whole_in(const WheelStore& to, const CacheKey& key, std::vector<std::string>* damage = nullptr) {
  auto there = to.find(key);
  if (!there) return false;
  auto problems = wheel_digest_problems(*there);
  if (damage) *damage = problems;
  return problems.empty();
}

// One source entry into DEST. The copy is written aside in DEST's store
// while the source entry is locked (a `cache gc` of the source waits rather
// than removing it mid-copy), and renamed into place under DEST's key lock;
// no lock is held while waiting for another, so pushes in both directions
// never deadlock.
// `committed` keeps each committed entry until the index refresh: what it
// replaced (a damaged copy) is deleted after that, no earlier.
void push_entry(const WheelStore& from, const WheelStore& to, const CacheKey& key, PushResult& result,
                std::vector<StagedEntry>& committed) {
  std::vector<std::string> damage;
  // Unlocked, so a pusher hashing a big wheel holds no one up; settled again below under the lock.
  if (whole_in(to, key, &damage)) {
    result.present.push_back(key.hash);
    return;
  }
  std::optional<StagedEntry> staged;
  {
    FileLock source_lock(from.lock_path(key));
    auto entry = entry_to_push(from, key, result);
    if (!entry) return;
    auto manifest = read_own_file(entry->dir / "manifest.json", kMaxManifestBytes);
    if (!manifest) {
      result.gone_from_source.push_back(key.hash);
      return;
    }
    std::vector<std::pair<std::string, std::string>> extra;  // the provenance and SBOM travel with the entry
    for (const char* name : {kProvenanceFile, kSbomFile})
      if (auto text = read_own_file(entry->dir / name, kMaxManifestBytes)) extra.emplace_back(name, *text);
    staged.emplace(to.stage(key, entry->wheels, *manifest, extra, entry->variants));
  }
  FileLock lock(to.lock_path(key));
  if (whole_in(to, key)) {  // another pusher was first: ours is removed unseen
    result.present.push_back(key.hash);
    return;
  }
  staged->commit();
  committed.push_back(std::move(*staged));
  if (damage.empty()) {
    result.pushed.push_back(key.hash);
  } else {
    result.repaired.push_back(key.hash);
    for (const auto& problem : damage) result.repairs.push_back(key.hash + ": " + problem);
  }
}

}  // namespace

std::optional<StoreEntry> entry_to_push(const WheelStore& from, const CacheKey& key, PushOutcome& outcome) {
  auto entry = from.find(key);
  if (!entry) {
    outcome.gone_from_source.push_back(key.hash);
    return std::nullopt;
  }
  // A damaged entry is never sent.
  if (auto problems = push_problems(*entry); !problems.empty()) {
    outcome.not_pushed.insert(outcome.not_pushed.end(), problems.begin(), problems.end());
    return std::nullopt;
  }
  return entry;
}

PushResult push_cache(const WheelStore& from, const std::filesystem::path& dest) {
  claim_shared_dir(dest);
  WheelStore to(dest);
  // Every refusal before the first write.
  refuse_link(to.root(), true);
  check_cache_index_dirs(dest);
  std::vector<CacheKey> pending;
  for (auto& entry : from.entries()) {
    if (entry.wheels.empty()) continue;
    CacheKey key{entry.key_text, entry.hash};
    refuse_link(to.lock_path(key), false);
    refuse_link(to.root() / key.hash, true);
    pending.push_back(std::move(key));
  }
  PushResult result;
  // An interrupt is taken between entries, never between an entry's commit
  // and the index refresh that lists it.
  InterruptibleScope between_entries;
  std::vector<StagedEntry> committed;
  // Once DEST's index lists the new copies: the damaged ones they replaced.
  const auto remove_replaced = [&] {
    for (auto& entry : committed) entry.remove_replaced();
  };
  try {
    for (const auto& key : pending) {
      if (pending_interrupt()) break;
      push_entry(from, to, key, result, committed);
    }
  } catch (const std::exception& error) {
    // DEST's index lists what DEST holds also after a failure (a full disk):
    // rebuilt from its store before the error is reported.
    try {
      refresh_cache_index(dest, to);
      remove_replaced();
    } catch (const std::exception& again) {
      const auto* user_error = dynamic_cast<const UserError*>(&error);
      throw UserError(user_error ? user_error->code() : ExitCode::environment,
                      std::string(error.what()) + "; rebuilding the index of " + dest.string() + " failed too (" +
                          again.what() + "): run `archbuild cache gc --cache-dir " + dest.string() +
                          "` once that is fixed");
    }
    throw;
  }
  result.index = refresh_cache_index(dest, to);
  remove_replaced();
  if (pending_interrupt())
    throw UserError(ExitCode::interrupted, "interrupted: " + std::to_string(result.pushed.size()) + " of " +
                                               std::to_string(pending.size()) + " entries pushed; the index of " +
                                               dest.string() + " lists what it holds");
  return result;
}

}  // namespace archbuild
