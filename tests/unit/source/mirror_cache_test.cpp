#include "source/mirror_cache.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

using namespace archbuild;

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
