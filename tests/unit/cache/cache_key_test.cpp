#include "cache/cache_key.h"

#include <gtest/gtest.h>

using namespace archbuild;

TEST(CacheKey, SortedTextVersionFirstAndDiff) {
  auto a = CacheKey::compute({{"ref", "v2.9.1"}, {"arch_list", "9.0"}, {"cuda", "13.0.88"}});
  EXPECT_EQ(a.text, "cache_format 2\narch_list 9.0\ncuda 13.0.88\nref v2.9.1\n");
  EXPECT_EQ(a.hash.size(), 64u);
  auto same = CacheKey::compute({{"cuda", "13.0.88"}, {"ref", "v2.9.1"}, {"arch_list", "9.0"}});
  EXPECT_EQ(a.hash, same.hash);
  auto b = CacheKey::compute({{"ref", "v2.9.1"}, {"arch_list", "9.0;12.0"}, {"patch", "x"}});
  EXPECT_NE(a.hash, b.hash);
  auto differences = diff_key_texts(a.text, b.text);
  ASSERT_EQ(differences.size(), 3u);
  EXPECT_EQ(differences[0].key, "arch_list");
  EXPECT_EQ(differences[0].before, "9.0");
  EXPECT_EQ(differences[0].after, "9.0;12.0");
  EXPECT_EQ(differences[1].key, "cuda");
  EXPECT_EQ(differences[1].after, "");
  EXPECT_EQ(differences[2].key, "patch");
  EXPECT_EQ(CacheKey::compute({{"multi", "a\nb"}}).text, "cache_format 2\nmulti a\\nb\n");
}

TEST(CacheKey, ValuesThatDifferNeverShareAText) {
  // `--env 'V=a\nb'` (a backslash and an n) against `--env $'V=a\nb'` (a newline)
  const auto typed = CacheKey::compute({{"build.extra_env.V", "a\\nb"}});
  const auto newline = CacheKey::compute({{"build.extra_env.V", "a\nb"}});
  EXPECT_NE(typed.hash, newline.hash);
  EXPECT_EQ(typed.text, "cache_format 2\nbuild.extra_env.V a\\\\nb\n");
  for (const std::string value : {"a\\nb", "a\nb", "tail\\", "\r\n\\", "plain"})
    EXPECT_EQ(parse_key_text(CacheKey::compute({{"v", value}}).text).at("v"), value);  // read back exactly
}
