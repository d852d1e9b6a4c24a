#include "preflight/preflight.h"

#include <string>

#include <gtest/gtest.h>

#include "arch/cuda_version.h"
#include "gpu/gpu_probe.h"
#include "test_support.h"
#include "toolchain/toolchain.h"
#include "ui/terminal.h"

using namespace archbuild;

TEST(Preflight, DriverCheckVerdicts) {
  Toolchain chain;
  chain.facts = *table().find({13, 0});
  GpuReport gpus;
  EXPECT_EQ(check_driver(chain, gpus).verdict, CheckVerdict::skip);
  gpus.driver_cuda = CudaVersion{13, 0};
  EXPECT_EQ(check_driver(chain, gpus).verdict, CheckVerdict::ok);
  gpus.driver_cuda = CudaVersion{12, 8};
  auto old = check_driver(chain, gpus);
  EXPECT_EQ(old.verdict, CheckVerdict::fail);
  EXPECT_NE(old.detail.find("580.65.06"), std::string::npos) << old.detail;
  chain.facts.version = {13, 2};
  gpus.driver_cuda = CudaVersion{13, 0};
  EXPECT_EQ(check_driver(chain, gpus).verdict, CheckVerdict::warn);
}

TEST(Preflight, Helpers) {
  EXPECT_LT(compare_driver_versions("580.65.06", "580.159.04"), 0);
  EXPECT_GT(compare_driver_versions("590.1", "580.159.04"), 0);
  EXPECT_EQ(compare_driver_versions("570.26", "570.26.0"), 0);
  EXPECT_EQ(first_error_line("In file included\nnvcc fatal   : Unsupported gpu architecture 'compute_50'\n"),
            "nvcc fatal   : Unsupported gpu architecture 'compute_50'");
}
