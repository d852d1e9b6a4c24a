#include "core/cache_layout.h"

#include "core/strings.h"

namespace archbuild {

std::filesystem::path CacheLayout::worktree(const std::string& name, const std::string& ref) const {
  return worktrees() / (name + "-" + path_safe(ref));
}

std::filesystem::path CacheLayout::build_dir(const std::string& name, const std::string& ref) const {
  return builds() / (name + "-" + path_safe(ref));
}

}  // namespace archbuild
