#pragma once

#include <filesystem>
#include <string_view>

namespace archbuild {

// Where a link on a simple-index page points, judged one way for a cache dir
// and for a bucket: a relative path from the page's dir that stays under the
// index's root. The href is already percent-decoded.
enum class LinkVerdict { inside, not_relative, outside };

struct LinkTarget {
  LinkVerdict verdict = LinkVerdict::outside;
  std::filesystem::path path;  // relative to the root, normalized: "store/HASH/wheels/x.whl"; empty unless inside
};

// `page_dir` is the page's dir relative to the root ("simple/torch").
LinkTarget judge_index_link(const std::filesystem::path& page_dir, std::string_view href);

}  // namespace archbuild
