#include "cache/index_link.h"

namespace archbuild {

LinkTarget judge_index_link(const std::filesystem::path& page_dir, std::string_view href) {
  // archbuild links what the cache holds: an absolute path or a URL is someone else's.
  if (href.empty() || href.front() == '/' || href.find("://") != std::string_view::npos)
    return {LinkVerdict::not_relative, {}};
  auto target = (page_dir / std::filesystem::path(href)).lexically_normal();
  // "a/../.." normalizes to "..": a climb out of the root, however spelled.
  if (target.empty() || target == "." || *target.begin() == ".." || target.is_absolute())
    return {LinkVerdict::outside, {}};
  return {LinkVerdict::inside, target};
}

}  // namespace archbuild
