#include "core/cache_dir.h"

#include <cstdlib>

#include "core/error.h"

namespace archbuild {

std::string resolve_cache_dir_default() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return (std::filesystem::path(xdg) / "archbuild").string();
  if (const char* home = std::getenv("HOME"); home && *home)
    return (std::filesystem::path(home) / ".cache" / "archbuild").string();
  fail_environment("no cache dir: set --cache-dir, ARCHBUILD_CACHE_DIR, XDG_CACHE_HOME or HOME");
}

}  // namespace archbuild
