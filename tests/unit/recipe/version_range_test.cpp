#include "recipe/version_range.h"

#include <optional>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

using namespace archbuild;

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
