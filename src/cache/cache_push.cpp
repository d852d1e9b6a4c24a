#include "cache/cache_push.h"

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
}  // namespace

PushResult push_cache(const WheelStore& from, const std::filesystem::path& dest) {
  std::filesystem::create_directories(dest);
  WheelStore to(dest);
  PushResult result;
  for (const auto& entry : from.entries()) {
    if (entry.wheels.empty()) continue;
    CacheKey key{read_text(entry.dir / "key.txt"), entry.hash};
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
