#include "cache/simple_index.h"

#include <gtest/gtest.h>

using namespace archbuild;

TEST(SimpleIndex, NormalizedNames) {
  EXPECT_EQ(normalize_project_name("Demo_Pkg"), "demo-pkg");
  EXPECT_EQ(normalize_project_name("torch"), "torch");
  EXPECT_EQ(normalize_project_name("a.-_b"), "a-b");
}
