#include "cache/wheel_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "core/error.h"

namespace archbuild {

WheelStore::WheelStore(std::filesystem::path cache_dir)
    : root_(cache_dir / "store"), quarantine_(cache_dir / "quarantine") {}

std::filesystem::path WheelStore::lock_path(const CacheKey& key) const { return root_ / (key.hash + ".lock"); }

std::optional<StoreEntry> WheelStore::find(const CacheKey& key) const {
  std::error_code ec;
  auto dir = root_ / key.hash;
  if (!std::filesystem::is_regular_file(dir / "key.txt", ec)) return std::nullopt;
  StoreEntry entry{dir, {}};
  for (const auto& file : std::filesystem::directory_iterator(dir / "wheels", ec))
    if (file.path().extension() == ".whl") entry.wheels.push_back(file.path());
  if (entry.wheels.empty()) return std::nullopt;
  std::sort(entry.wheels.begin(), entry.wheels.end());
  return entry;
}

namespace {
std::filesystem::path fill_aside(const std::filesystem::path& parent, const std::string& name,
                                 const std::vector<std::filesystem::path>& wheels,
                                 const std::vector<std::pair<std::string, std::string>>& files) {
  std::filesystem::create_directories(parent);
  auto temporary = parent / (".tmp-" + name + "-" + std::to_string(getpid()));
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
}  // namespace

StoreEntry WheelStore::publish(const CacheKey& key, const std::vector<std::filesystem::path>& wheels,
                               const std::string& manifest_json) const {
  auto temporary = fill_aside(root_, key.hash, wheels, {{"key.txt", key.text}, {"manifest.json", manifest_json}});
  auto target = root_ / key.hash;
  std::error_code ec;
  std::filesystem::remove_all(target, ec);  // a stale, incomplete entry (no key.txt) under the lock
  std::filesystem::rename(temporary, target);
  return *find(key);
}

std::filesystem::path WheelStore::quarantine(const CacheKey& key, const std::vector<std::filesystem::path>& wheels,
                                             const std::string& report_json) const {
  auto temporary = fill_aside(quarantine_, key.hash, wheels, {{"key.txt", key.text}, {"validation.json", report_json}});
  auto target = quarantine_ / key.hash;
  std::error_code ec;
  std::filesystem::remove_all(target, ec);
  std::filesystem::rename(temporary, target);
  return target;
}

KeyLock::KeyLock(const std::filesystem::path& path) {
  std::filesystem::create_directories(path.parent_path());
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) fail_environment("cannot create lock " + path.string());
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    waited_ = true;
    while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
}

KeyLock::~KeyLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace archbuild
