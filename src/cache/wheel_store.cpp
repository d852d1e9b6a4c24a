#include "cache/wheel_store.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <thread>
#include <utility>

#include "core/cache_layout.h"
#include "core/error.h"
#include "core/file_lock.h"
#include "core/nonce.h"
#include "core/regular_file.h"
#include "core/system_info.h"

namespace archbuild {

WheelStore::WheelStore(std::filesystem::path cache_dir)
    : root_(CacheLayout(cache_dir).store()), quarantine_(CacheLayout(cache_dir).quarantine()) {}

std::filesystem::path WheelStore::lock_path(const CacheKey& key) const { return lock_path(key.hash); }
std::filesystem::path WheelStore::lock_path(const std::string& hash) const { return root_ / (hash + ".lock"); }

std::optional<StoreEntry> WheelStore::load(const std::filesystem::path& dir) const {
  std::error_code ec;
  auto key_text = read_own_file(dir / "key.txt", kMaxKeyTextBytes);
  if (!key_text) return std::nullopt;
  StoreEntry entry;
  entry.dir = dir;
  entry.hash = dir.filename().string();
  entry.key_text = std::move(*key_text);
  entry.inputs = KeyInputs::parse(entry.key_text);
  // Only regular files count: the status of the entry itself, never of what a link names.
  for (auto [sub, list] : {std::pair{"wheels", &entry.wheels}, std::pair{"variants", &entry.variants}}) {
    for (const auto& file : std::filesystem::directory_iterator(dir / sub, ec)) {
      if (!file.is_regular_file(ec) || file.is_symlink(ec))
        entry.foreign.push_back(file.path());
      else if (file.path().extension() == ".whl")
        list->push_back(file.path());
    }
    std::sort(list->begin(), list->end());
  }
  std::sort(entry.foreign.begin(), entry.foreign.end());
  if (auto manifest = read_own_file(dir / "manifest.json", kMaxManifestBytes)) {
    if (auto json = nlohmann::json::parse(*manifest, nullptr, false); json.is_object()) {
      entry.manifest = BuildReport::from_json(json);
      entry.manifest_json = std::move(json);
    }
  }
  entry.published = std::filesystem::last_write_time(dir / "manifest.json", ec);
  if (ec) entry.published = std::filesystem::last_write_time(dir / "key.txt", ec);
  return entry;
}

std::optional<StoreEntry> WheelStore::find(const CacheKey& key) const {
  auto entry = load(root_ / key.hash);
  if (!entry || entry->wheels.empty()) return std::nullopt;
  return entry;
}

std::vector<StoreEntry> WheelStore::entries() const {
  std::vector<StoreEntry> all;
  std::error_code ec;
  for (const auto& dir : std::filesystem::directory_iterator(root_, ec)) {
    auto name = dir.path().filename().string();
    if (name.empty() || name[0] == '.' || !dir.is_directory(ec)) continue;
    if (auto entry = load(dir.path())) all.push_back(std::move(*entry));
  }
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return a.published != b.published ? a.published > b.published : a.hash < b.hash;
  });
  return all;
}

std::vector<StoreEntry> WheelStore::matching(const std::string& prefix) const {
  std::vector<StoreEntry> found;
  for (auto& entry : entries())
    if (entry.hash.rfind(prefix, 0) == 0) found.push_back(std::move(entry));
  return found;
}

namespace {

std::filesystem::path temporary_name(const std::filesystem::path& parent, const std::string& name) {
  // Host and pid in the name let `cache gc` tell a dead publish from a
  // running one, also in a directory several builders share.
  return parent /
         (std::string(CacheLayout::kTemporaryPrefix) + name + "@" + host_name() + "@" + std::to_string(getpid()));
}

// Written aside, whole, or not at all: on any error (a full disk) what was
// written is removed before the error goes on.
std::filesystem::path fill_aside(const std::filesystem::path& parent, const std::string& name,
                                 const std::vector<std::filesystem::path>& wheels,
                                 const std::vector<std::pair<std::string, std::string>>& files,
                                 const std::vector<std::filesystem::path>& variants = {}) {
  const auto temporary = temporary_name(parent, name);
  std::error_code ec;
  try {
    std::filesystem::create_directories(parent);
    std::filesystem::remove_all(temporary);
    std::filesystem::create_directories(temporary / "wheels");
    for (const auto& wheel : wheels) copy_whole_file(wheel, temporary / "wheels" / wheel.filename());
    if (!variants.empty()) std::filesystem::create_directories(temporary / "variants");
    for (const auto& wheel : variants) {
      copy_whole_file(wheel, temporary / "variants" / wheel.filename());
      // its variant.json, for the index (no zip read there)
      auto sidecar = std::filesystem::path(wheel.string() + ".json");
      if (std::filesystem::exists(sidecar)) copy_whole_file(sidecar, temporary / "variants" / sidecar.filename());
    }
    for (const auto& [file, content] : files) write_whole_file(temporary / file, content);
  } catch (const std::filesystem::filesystem_error& error) {
    std::filesystem::remove_all(temporary, ec);
    fail_writing(error, parent);
  } catch (...) {
    std::filesystem::remove_all(temporary, ec);
    throw;
  }
  return temporary;
}

// What an entry renamed aside is called after: .tmp-KEY-replaced.NONCE@HOST@PID.
constexpr std::string_view kReplacedSuffix = "-replaced";
constexpr std::string_view kRemovedSuffix = "-removed";

// `dir` renamed aside as `what`: under a name no other process uses (two
// containers may share a host name and a pid), its time now (another
// host's gc takes an hour-old temporary for dead, and a rename keeps the
// entry's old time).
std::filesystem::path rename_aside(const std::filesystem::path& root, const std::filesystem::path& dir,
                                   const std::string& what) {
  const auto aside = temporary_name(root, what + "." + random_nonce());
  std::filesystem::rename(dir, aside);
  std::error_code ec;
  std::filesystem::last_write_time(aside, std::filesystem::file_time_type::clock::now(), ec);
  return aside;
}

// A stale entry under the same key (a rebuild, under the key's lock) goes
// aside by rename first, so that a kill never leaves a half-deleted entry
// at the key: only the old one, the new one, or none for two renames.
// Returns where the stale entry went (empty: there was none).
std::filesystem::path move_into_place(const std::filesystem::path& root, const std::filesystem::path& temporary,
                                      const std::filesystem::path& target) {
  std::error_code ec;
  std::filesystem::path replaced;
  if (std::filesystem::exists(std::filesystem::symlink_status(target, ec)))
    replaced = rename_aside(root, target, target.filename().string() + std::string(kReplacedSuffix));
  std::filesystem::rename(temporary, target);
  return replaced;
}
}  // namespace

void pause_for_publish_test() {
  if (const char* pause = std::getenv("ARCHBUILD_PUBLISH_PAUSE_MS")) {
    std::cerr << "archbuild: test hook: pausing " << pause << " ms before the publish rename\n" << std::flush;
    std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(pause)));
  }
}

StagedEntry::StagedEntry(const WheelStore& store, CacheKey key, std::filesystem::path temporary)
    : store_(&store), key_(std::move(key)), temporary_(std::move(temporary)) {}

StagedEntry::StagedEntry(StagedEntry&& other) noexcept
    : store_(other.store_),
      key_(std::move(other.key_)),
      temporary_(std::exchange(other.temporary_, {})),
      replaced_(std::exchange(other.replaced_, {})) {}

StagedEntry::~StagedEntry() {
  std::error_code ec;
  if (!temporary_.empty()) std::filesystem::remove_all(temporary_, ec);
}

void StagedEntry::remove_replaced() {
  if (!replaced_.empty()) std::filesystem::remove_all(replaced_);
  replaced_.clear();
}

StoreEntry StagedEntry::commit() {
  pause_for_publish_test();
  replaced_ = move_into_place(store_->root_, temporary_, store_->root_ / key_.hash);
  temporary_.clear();
  auto entry = store_->load(store_->root_ / key_.hash);
  if (!entry) fail_environment("the entry just published vanished: " + (store_->root_ / key_.hash).string());
  return *entry;
}

StagedEntry WheelStore::stage(const CacheKey& key, const std::vector<std::filesystem::path>& wheels,
                              const std::string& manifest_json,
                              const std::vector<std::pair<std::string, std::string>>& extra,
                              const std::vector<std::filesystem::path>& variants) const {
  std::vector<std::pair<std::string, std::string>> files = {{"manifest.json", manifest_json}, {"key.txt", key.text}};
  files.insert(files.end(), extra.begin(), extra.end());
  return {*this, key, fill_aside(root_, key.hash, wheels, files, variants)};
}

StoreEntry WheelStore::publish(const CacheKey& key, const std::vector<std::filesystem::path>& wheels,
                               const std::string& manifest_json,
                               const std::vector<std::pair<std::string, std::string>>& extra,
                               const std::vector<std::filesystem::path>& variants) const {
  auto staged = stage(key, wheels, manifest_json, extra, variants);
  auto entry = staged.commit();
  staged.remove_replaced();
  return entry;
}

std::filesystem::path WheelStore::quarantine(const CacheKey& key, const std::vector<std::filesystem::path>& wheels,
                                             const std::string& report_json) const {
  auto temporary = fill_aside(quarantine_, key.hash, wheels, {{"key.txt", key.text}, {"validation.json", report_json}});
  std::error_code ec;
  std::filesystem::remove_all(move_into_place(quarantine_, temporary, quarantine_ / key.hash), ec);
  return quarantine_ / key.hash;
}

bool WheelStore::remove_if_unchanged(const StoreEntry& entry) const {
  auto doomed = set_aside_if_unchanged(entry);
  if (doomed) std::filesystem::remove_all(*doomed);
  return doomed.has_value();
}

std::optional<std::filesystem::path> WheelStore::set_aside_if_unchanged(const StoreEntry& entry) const {
  FileLock lock(lock_path(entry.hash));  // no build of that key publishes into it meanwhile
  auto now = load(entry.dir);
  if (!now || now->published != entry.published) return std::nullopt;
  return rename_aside(root_, entry.dir, entry.hash + std::string(kRemovedSuffix));
}

bool is_set_aside_name(const std::string& name) {
  const auto host = name.find('@');
  if (!name.starts_with(CacheLayout::kTemporaryPrefix) || host == std::string::npos) return false;
  const auto what = std::string_view(name).substr(0, host);
  return what.find(kReplacedSuffix) != std::string_view::npos || what.find(kRemovedSuffix) != std::string_view::npos;
}

std::vector<StoreEntry> WheelStore::set_aside() const {
  std::vector<StoreEntry> found;
  std::error_code ec;
  for (const auto& dir : std::filesystem::directory_iterator(root_, ec)) {
    if (!is_set_aside_name(dir.path().filename().string())) continue;
    try {
      if (auto entry = load(dir.path())) found.push_back(std::move(*entry));
    } catch (const std::exception&) {
      // not an entry archbuild wrote: `cache gc` removes it as a leftover
    }
  }
  return found;
}

std::vector<std::filesystem::path> dead_temporaries(const std::filesystem::path& dir, std::string_view prefix) {
  std::vector<std::filesystem::path> found;
  std::error_code ec;
  const auto here = host_name();
  const auto hour_ago = std::filesystem::file_time_type::clock::now() - std::chrono::hours(1);
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    auto name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    auto last = name.rfind('@');
    auto first = last == std::string::npos || last == 0 ? std::string::npos : name.rfind('@', last - 1);
    bool dead;
    if (first == std::string::npos) {
      dead = true;  // not a name archbuild writes
    } else if (name.substr(first + 1, last - first - 1) == here) {
      int pid = std::atoi(name.c_str() + last + 1);
      dead = pid <= 0 || (::kill(pid, 0) != 0 && errno != EPERM);
    } else {
      dead = std::filesystem::last_write_time(entry.path(), ec) <
             hour_ago;  // another builder's: its pid means nothing here
    }
    if (dead) found.push_back(entry.path());
  }
  std::sort(found.begin(), found.end());
  return found;
}

std::string temporary_prefix_of_this_process(std::string_view what) {
  return std::string(CacheLayout::kTemporaryPrefix) + std::string(what) + "@" + host_name() + "@" +
         std::to_string(getpid());
}

std::vector<std::filesystem::path> WheelStore::leftovers() const {
  return dead_temporaries(root_, CacheLayout::kTemporaryPrefix);
}

}  // namespace archbuild
