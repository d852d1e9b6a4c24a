#include "cache/wheel_store.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "core/cache_layout.h"
#include "core/error.h"

namespace archbuild {

WheelStore::WheelStore(std::filesystem::path cache_dir)
    : root_(CacheLayout(cache_dir).store()), quarantine_(CacheLayout(cache_dir).quarantine()) {}

std::string StoreEntry::value(const std::string& key_name) const {
  auto it = key.find(key_name);
  return it == key.end() ? "" : it->second;
}

std::filesystem::path WheelStore::lock_path(const CacheKey& key) const { return root_ / (key.hash + ".lock"); }

std::optional<StoreEntry> WheelStore::load(const std::filesystem::path& dir) const {
  std::error_code ec;
  std::ifstream key_file(dir / "key.txt");
  if (!key_file) return std::nullopt;
  std::stringstream key_text;
  key_text << key_file.rdbuf();
  StoreEntry entry;
  entry.dir = dir;
  entry.hash = dir.filename().string();
  entry.key = parse_key_text(key_text.str());
  for (const auto& file : std::filesystem::directory_iterator(dir / "wheels", ec))
    if (file.path().extension() == ".whl") entry.wheels.push_back(file.path());
  std::sort(entry.wheels.begin(), entry.wheels.end());
  std::ifstream manifest(dir / "manifest.json");
  if (auto json = nlohmann::json::parse(manifest, nullptr, false); json.is_object()) {
    entry.manifest = BuildReport::from_json(json);
    entry.manifest_json = std::move(json);
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
constexpr const char* kTemporaryPrefix = ".tmp-";

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || !name[0]) return "localhost";
  return name;
}

std::filesystem::path fill_aside(const std::filesystem::path& parent, const std::string& name,
                                 const std::vector<std::filesystem::path>& wheels,
                                 const std::vector<std::pair<std::string, std::string>>& files) {
  std::filesystem::create_directories(parent);
  // Host and pid in the name let `cache gc` tell a dead publish from a
  // running one, also in a directory several builders share.
  auto temporary = parent / (kTemporaryPrefix + name + "@" + host_name() + "@" + std::to_string(getpid()));
  std::filesystem::remove_all(temporary);
  std::filesystem::create_directories(temporary / "wheels");
  for (const auto& wheel : wheels)
    std::filesystem::copy_file(wheel, temporary / "wheels" / wheel.filename(),
                               std::filesystem::copy_options::overwrite_existing);
  for (const auto& [file, content] : files) {
    std::ofstream out(temporary / file);
    out << content;
    if (!out) fail_environment("cannot write " + (temporary / file).string());
  }
  return temporary;
}

void move_into_place(const std::filesystem::path& temporary, const std::filesystem::path& target) {
  std::error_code ec;
  std::filesystem::remove_all(target, ec);  // a stale entry under the same key, replaced under its lock
  std::filesystem::rename(temporary, target);
}
}  // namespace

void pause_for_publish_test() {
  if (const char* pause = std::getenv("ARCHBUILD_PUBLISH_PAUSE_MS")) {
    std::cerr << "archbuild: test hook: pausing " << pause << " ms before the publish rename\n" << std::flush;
    std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(pause)));
  }
}

StoreEntry WheelStore::publish(const CacheKey& key, const std::vector<std::filesystem::path>& wheels,
                               const std::string& manifest_json) const {
  auto temporary = fill_aside(root_, key.hash, wheels, {{"manifest.json", manifest_json}, {"key.txt", key.text}});
  pause_for_publish_test();
  move_into_place(temporary, root_ / key.hash);
  return *find(key);
}

std::filesystem::path WheelStore::quarantine(const CacheKey& key, const std::vector<std::filesystem::path>& wheels,
                                             const std::string& report_json) const {
  auto temporary = fill_aside(quarantine_, key.hash, wheels, {{"key.txt", key.text}, {"validation.json", report_json}});
  move_into_place(temporary, quarantine_ / key.hash);
  return quarantine_ / key.hash;
}

void WheelStore::remove(const StoreEntry& entry) const {
  auto doomed = root_ / (kTemporaryPrefix + entry.hash + "-removed@" + host_name() + "@" + std::to_string(getpid()));
  std::filesystem::rename(entry.dir, doomed);
  std::filesystem::remove_all(doomed);
}

std::vector<std::filesystem::path> WheelStore::leftovers() const {
  std::vector<std::filesystem::path> found;
  std::error_code ec;
  const auto here = host_name();
  const auto hour_ago = std::filesystem::file_time_type::clock::now() - std::chrono::hours(1);
  for (const auto& dir : std::filesystem::directory_iterator(root_, ec)) {
    auto name = dir.path().filename().string();
    if (name.rfind(kTemporaryPrefix, 0) != 0) continue;
    auto last = name.rfind('@');
    auto first = last == std::string::npos || last == 0 ? std::string::npos : name.rfind('@', last - 1);
    bool dead;
    if (first == std::string::npos) {
      dead = true;  // not a name archbuild writes
    } else if (name.substr(first + 1, last - first - 1) == here) {
      int pid = std::atoi(name.c_str() + last + 1);
      dead = pid <= 0 || (::kill(pid, 0) != 0 && errno != EPERM);
    } else {
      dead = std::filesystem::last_write_time(dir.path(), ec) <
             hour_ago;  // another builder's: its pid means nothing here
    }
    if (dead) found.push_back(dir.path());
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace archbuild
