#include "core/self_executable.h"

#include <filesystem>

#include <gtest/gtest.h>

using namespace archbuild;

TEST(SelfExecutable, ReplacedBinaryRunsThroughProc) {
  EXPECT_EQ(self_executable_from("/usr/bin/archbuild", 42), "/usr/bin/archbuild");
  // the file was replaced or removed while running: this process's image stays reachable
  EXPECT_EQ(self_executable_from("/usr/bin/archbuild (deleted)", 42), "/proc/42/exe");
  EXPECT_EQ(self_executable_from("/opt/deleted", 42), "/opt/deleted");
  auto self = self_executable();
  EXPECT_TRUE(std::filesystem::is_regular_file(self)) << self;
  EXPECT_EQ(std::filesystem::path(self).filename(), "archbuild_unit_tests");
}
