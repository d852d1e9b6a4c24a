#include "doctor/package_scan.h"

#include <gtest/gtest.h>

using namespace archbuild;

TEST(PackageScan, NamespacePackagesGroupOneLevelDeeper) {
  EXPECT_EQ(package_name_for("/nonexistent/site", "/nonexistent/site/torch/lib/libtorch_cuda.so"), "torch");
}
