#include "cache/indexed_builds.h"

#include <gtest/gtest.h>

namespace archbuild {
namespace {

TEST(DependencyLookup, TheLabelFilterFindsTheToolkitAmongTheLabelsParts) {
  const auto accepts = cuda_label_filter("13.0.88");
  EXPECT_TRUE(accepts("cu130.sm90"));
  EXPECT_TRUE(accepts("cu130"));
  EXPECT_TRUE(accepts("git1a2b3c.cu130.sm80.sm90ptx"));  // a version with a local part of its own
  EXPECT_FALSE(accepts("cu129.sm90"));
  EXPECT_FALSE(accepts("cu1300.sm90"));
  EXPECT_FALSE(accepts("sm90"));
}

}  // namespace
}  // namespace archbuild
