#include "source/url_rewrite.h"

#include <gtest/gtest.h>

#include "core/error.h"

using namespace archbuild;

TEST(UrlRewrite, LongestPrefixWins) {
  UrlRewriter rewriter;
  rewriter.add_option("https://github.com/=https://mirror.internal/gh/");
  rewriter.add_option("https://github.com/pytorch/=file:///srv/pytorch/");
  EXPECT_EQ(rewriter.apply("https://github.com/pytorch/pytorch.git"), "file:///srv/pytorch/pytorch.git");
  EXPECT_EQ(rewriter.apply("https://github.com/NVIDIA/cutlass.git"), "https://mirror.internal/gh/NVIDIA/cutlass.git");
  EXPECT_EQ(rewriter.apply("https://gitlab.com/x/y.git"), "https://gitlab.com/x/y.git");
  EXPECT_THROW(rewriter.add_option("no-equals-sign"), UserError);
  EXPECT_THROW(rewriter.add_option("=to"), UserError);
}

TEST(UrlRewrite, RelativeSubmoduleUrls) {
  EXPECT_EQ(resolve_submodule_url("https://github.com/org/top.git", "../sub.git"), "https://github.com/org/sub.git");
  EXPECT_EQ(resolve_submodule_url("https://github.com/org/top.git", "./sub"), "https://github.com/org/top.git/sub");
  EXPECT_EQ(resolve_submodule_url("https://github.com/org/top", "../../other/x.git"), "https://github.com/other/x.git");
  EXPECT_EQ(resolve_submodule_url("/srv/repos/top", "../leaf"), "/srv/repos/leaf");
  EXPECT_EQ(resolve_submodule_url("git@github.com:org/top.git", "../sub.git"), "git@github.com:org/sub.git");
  EXPECT_EQ(resolve_submodule_url("https://x/top", "https://y/abs.git"), "https://y/abs.git");
}
