#include "builder/build_log.h"

#include <gtest/gtest.h>

using namespace archbuild;

TEST(BuildLog, OomLines) {
  EXPECT_TRUE(is_oom_line("c++: fatal error: Killed signal terminated program cc1plus"));
  EXPECT_TRUE(is_oom_line("internal compiler error: Killed (program cc1plus)"));
  EXPECT_TRUE(is_oom_line("nvcc error   : 'cicc' died due to signal 9 (Kill signal)"));
  EXPECT_FALSE(is_oom_line("error: identifier \"x\" is undefined"));
}

TEST(BuildLog, FirstErrorWithContextAndCommand) {
  FirstErrorFinder finder;
  for (const char* line : {"[1/3] Building CXX object a.o", "[2/3] Building CUDA object b.cu.o", "FAILED: b.cu.o",
                           "nvcc -c b.cu -o b.cu.o", "b.cu(3): error: expected a \";\"", "  int x", "1 error detected",
                           "[3/3] c.o", "later.cpp: error: second error"})
    finder.feed(line);
  ASSERT_TRUE(finder.found());
  EXPECT_EQ(finder.failed_target(), "b.cu.o");
  EXPECT_EQ(finder.failing_command(), "nvcc -c b.cu -o b.cu.o");
  auto excerpt = finder.excerpt();
  ASSERT_GE(excerpt.size(), 4u);
  EXPECT_EQ(excerpt[3], "b.cu(3): error: expected a \";\"");
  EXPECT_EQ(excerpt[0], "[2/3] Building CUDA object b.cu.o");
  FirstErrorFinder newer_ninja;
  newer_ninja.feed("FAILED: [code=2] CMakeFiles/x.dir/a.cu.o ");
  EXPECT_EQ(newer_ninja.failed_target(), "CMakeFiles/x.dir/a.cu.o");
  FirstErrorFinder none;
  none.feed("Traceback (most recent call last):");
  none.feed("the end");
  EXPECT_FALSE(none.found());
  EXPECT_EQ(none.excerpt().back(), "the end");  // the tail instead
}
