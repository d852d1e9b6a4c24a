#include "cache/cache_push.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/file_lock.h"

namespace archbuild {

namespace {
std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) fail_environment("cannot read " + path.string());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

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

PushResult push_cache(const WheelStore& from, const std::filesystem::path& dest) {
  claim_shared_dir(dest);
  WheelStore to(dest);
  // Every refusal before the first write.
  refuse_link(to.root(), true);
  check_cache_index_dirs(dest);
  std::vector<std::pair<StoreEntry, CacheKey>> pending;
  for (auto& entry : from.entries()) {
    if (entry.wheels.empty()) continue;
    CacheKey key{read_text(entry.dir / "key.txt"), entry.hash};
    refuse_link(to.lock_path(key), false);
    refuse_link(to.root() / key.hash, true);
    pending.emplace_back(std::move(entry), std::move(key));
  }
  PushResult result;
  for (const auto& [entry, key] : pending) {
    FileLock lock(to.lock_path(key));
    if (to.find(key)) {
      result.present.push_back(entry.hash);
      continue;
    }
    to.publish(key, entry.wheels, read_text(entry.dir / "manifest.json"));
    result.pushed.push_back(entry.hash);
  }
  result.index = refresh_cache_index(dest, to);
  return result;
}

}  // namespace archbuild
