#include <gtest/gtest.h>

#include "core/error.h"
#include "recipe/version_range.h"
#include "source/mirror_cache.h"
#include "source/url_rewrite.h"

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

TEST(VersionRange, RefsAndRanges) {
  EXPECT_EQ(version_of_ref("v2.9.1"), (std::vector<int>{2, 9, 1}));
  EXPECT_EQ(version_of_ref("2.10.0-rc3"), (std::vector<int>{2, 10, 0}));
  EXPECT_FALSE(version_of_ref("main").has_value());
  EXPECT_FALSE(version_of_ref("1234567").has_value());
  auto setup_py = VersionRange::parse(">=2.5,<2.12");
  EXPECT_TRUE(setup_py.contains(version_of_ref("v2.5.0")));
  EXPECT_TRUE(setup_py.contains(version_of_ref("v2.11.3")));
  EXPECT_FALSE(setup_py.contains(version_of_ref("v2.12.0")));
  EXPECT_FALSE(setup_py.contains(version_of_ref("v2.4.1")));
  EXPECT_FALSE(setup_py.contains(std::nullopt));  // main is newer than every release
  EXPECT_TRUE(VersionRange::parse(">=2.12").contains(std::nullopt));
  EXPECT_TRUE(VersionRange::parse("*").contains(std::nullopt));
  EXPECT_TRUE(VersionRange::parse("==2.9").contains(version_of_ref("v2.9.0")));
  EXPECT_THROW(VersionRange::parse("2.5-2.12"), std::invalid_argument);
  EXPECT_THROW(VersionRange::parse(">=two"), std::invalid_argument);
}

TEST(MirrorCache, ClosestNames) {
  std::vector<std::string> tags = {"v1.0", "v2.0", "v2.9.1", "v2.9.0", "ciflow/x"};
  auto close = closest_names("v2.9.2", tags, 2);
  EXPECT_EQ(close, (std::vector<std::string>{"v2.9.0", "v2.9.1"}));
}

TEST(MirrorCache, PathPerUrlIsStableAndDistinct) {
  MirrorCache cache("/tmp/cache");
  EXPECT_EQ(cache.path_for("https://github.com/pytorch/pytorch.git"),
            cache.path_for("https://github.com/pytorch/pytorch.git"));
  EXPECT_NE(cache.path_for("https://github.com/pytorch/pytorch.git"),
            cache.path_for("https://mirror/pytorch/pytorch.git"));
  EXPECT_EQ(cache.path_for("https://github.com/pytorch/pytorch.git").filename().string().rfind("pytorch-", 0), 0u);
}

#include "wheel/wheel_archive.h"

TEST(Wheel, NameAndRecordDigest) {
  auto name = WheelName::parse("torch-2.9.1+cu130.sm90-cp311-cp311-manylinux_2_28_x86_64.whl");
  ASSERT_TRUE(name.has_value());
  EXPECT_EQ(name->name, "torch");
  EXPECT_EQ(name->version, "2.9.1+cu130.sm90");
  EXPECT_EQ(name->platform, "manylinux_2_28_x86_64");
  auto with_build = WheelName::parse("demo-1.0-1-py3-none-any.whl");
  ASSERT_TRUE(with_build.has_value());
  EXPECT_EQ(with_build->build, "1");
  EXPECT_FALSE(WheelName::parse("demo-1.0.tar.gz").has_value());
  EXPECT_FALSE(WheelName::parse("demo-py3-none-any.whl").has_value());
  // sha256("") in RECORD's urlsafe base64 without padding
  EXPECT_EQ(record_digest(""), "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU");
}

#include "cache/simple_index.h"

TEST(SimpleIndex, NormalizedNames) {
  EXPECT_EQ(normalize_project_name("Demo_Pkg"), "demo-pkg");
  EXPECT_EQ(normalize_project_name("torch"), "torch");
  EXPECT_EQ(normalize_project_name("a.-_b"), "a-b");
}
