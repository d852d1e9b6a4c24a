#include "cache/cache_index.h"

#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <set>

#include "core/cache_layout.h"
#include "core/error.h"
#include "core/file_lock.h"

namespace archbuild {

CacheIndex cache_index_paths(const std::filesystem::path& cache_dir) {
  const CacheLayout layout(cache_dir);
  return {layout.wheels(), layout.simple_index(), {}, {}};
}

namespace {

bool same_file(const std::filesystem::path& a, const std::filesystem::path& b) {
  struct stat x {};
  struct stat y {};
  return ::stat(a.c_str(), &x) == 0 && ::stat(b.c_str(), &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

// A hard link (same bytes, no copy) renamed over `target`; a copy where the
// filesystem cannot link.
void link_into_place(const std::filesystem::path& source, const std::filesystem::path& target) {
  auto temporary = target.parent_path() / (".tmp-" + std::to_string(getpid()) + "-" + target.filename().string());
  std::error_code ec;
  std::filesystem::remove(temporary, ec);
  std::filesystem::create_hard_link(source, temporary, ec);
  if (ec) std::filesystem::copy_file(source, temporary, std::filesystem::copy_options::overwrite_existing);
  std::filesystem::rename(temporary, target);
}

}  // namespace

CacheIndex refresh_cache_index(const std::filesystem::path& cache_dir, const WheelStore& store) {
  auto index = cache_index_paths(cache_dir);
  FileLock lock(CacheLayout(cache_dir).index_lock());
  std::filesystem::create_directories(index.wheels_dir);

  // Newest entry wins a file name (entries() is newest first).
  std::map<std::string, std::filesystem::path> chosen;
  for (const auto& entry : store.entries())
    for (const auto& wheel : entry.wheels) {
      if (chosen.emplace(wheel.filename().string(), wheel).second) continue;
      index.shadowed.push_back(wheel);
    }
  for (const auto& [name, source] : chosen) {
    auto target = index.wheels_dir / name;
    if (!same_file(source, target)) link_into_place(source, target);
  }
  index.wheels = write_simple_index(index.wheels_dir, index.simple_dir,
                                    [&](const std::string& file) { return chosen.count(file) > 0; });
  // Only now, with no page naming them, the links of removed entries go.
  std::error_code ec;
  for (const auto& file : std::filesystem::directory_iterator(index.wheels_dir, ec)) {
    auto name = file.path().filename().string();
    if (!chosen.count(name)) std::filesystem::remove(file.path(), ec);
  }
  return index;
}

}  // namespace archbuild
