#include "source/patch_apply.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/error.h"

using namespace archbuild;
namespace fs = std::filesystem;

TEST(RelativePath, OnlyNormalisedPathsInsideTheTree) {
  EXPECT_EQ(relative_path_problem("src/a.c"), "");
  EXPECT_EQ(relative_path_problem("third_party/sub"), "");
  EXPECT_EQ(relative_path_problem("a..b/c.d"), "");
  EXPECT_EQ(relative_path_problem(".github/x"), "");
  EXPECT_EQ(relative_path_problem(""), "is empty");
  EXPECT_EQ(relative_path_problem("/etc/passwd"), "is an absolute path");
  EXPECT_EQ(relative_path_problem("../victim"), "climbs out with '..'");
  EXPECT_EQ(relative_path_problem("a/../../victim"), "climbs out with '..'");
  EXPECT_NE(relative_path_problem("a//b"), "");
  EXPECT_NE(relative_path_problem("./a"), "");
  EXPECT_NE(relative_path_problem("a/"), "");
  EXPECT_EQ(relative_path_problem(".git/config"), "goes into .git");
  EXPECT_EQ(relative_path_problem("sub/.GIT/hooks/x"), "goes into .git");
  EXPECT_NE(relative_path_problem(std::string_view("a\0b", 3)), "");
}
