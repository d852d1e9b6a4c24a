#include "core/cache_dir.h"

#include <cstdlib>

#include "core/error.h"

namespace archbuild {

std::filesystem::path resolve_cache_dir(const std::string& option) {
  if (!option.empty()) return std::filesystem::absolute(option);
  if (const char* env = std::getenv("ARCHBUILD_CACHE_DIR"); env && *env) return std::filesystem::absolute(env);
  return resolve_cache_dir_default();
}

std::string resolve_cache_dir_default() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return (std::filesystem::path(xdg) / "archbuild").string();
  if (const char* home = std::getenv("HOME"); home && *home) return (std::filesystem::path(home) / ".cache" / "archbuild").string();
  fail_environment("no cache dir: set --cache-dir, ARCHBUILD_CACHE_DIR, XDG_CACHE_HOME or HOME");
}

}  // namespace archbuild
