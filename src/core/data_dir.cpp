#include "core/data_dir.h"

#include <cstdlib>
#include <system_error>

namespace archbuild {

std::filesystem::path data_dir() {
  if (const char* env = std::getenv("ARCHBUILD_DATA_DIR"); env && *env) return env;
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto installed = exe.parent_path().parent_path() / "share" / "archbuild";
    if (std::filesystem::exists(installed / "toolchains", ec)) return installed;
  }
  return ARCHBUILD_SOURCE_DIR;
}

}  // namespace archbuild
