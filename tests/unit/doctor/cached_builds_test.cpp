#include "doctor/cached_builds.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace archbuild {
namespace {

TEST(CachedBuilds, OnlyTheMachinesOwnInstallAndNoCacheIsNoBuild) {
  const std::vector<CachedTorch> builds = {
      {"2.11.0+cu130.sm90", CudaVersion::parse("13.0"), {}, "pip install a", "x86_64"},
      {"2.11.0+cu130.sm90", CudaVersion::parse("13.0"), {}, "pip install b", "aarch64"}};
  const auto here = built_for(builds, "aarch64");
  ASSERT_EQ(here.size(), 1u);
  EXPECT_EQ(here[0].install_line, "pip install b");
  EXPECT_TRUE(built_for(builds, "riscv64").empty());

  TempDir dir;
  EXPECT_TRUE(cached_torch_builds(dir.path / "no-cache").empty());
  write(dir.path / "cache" / "simple", "a file where the index goes");
  EXPECT_TRUE(cached_torch_builds(dir.path / "cache").empty());
}

}  // namespace
}  // namespace archbuild
