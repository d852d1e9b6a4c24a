#include "toolchain/installed_toolkit.h"

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "arch/compute_capability.h"
#include "arch/cuda_version.h"
#include "test_support.h"
#include "toolchain/toolchain.h"

using namespace archbuild;

TEST(InstalledToolkit, ParsesNvccOutput) {
  CudaVersion version;
  std::string release;
  ASSERT_TRUE(
      parse_nvcc_version("nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 13.0, V13.0.88\n",
                         version, release));
  EXPECT_EQ(version, (CudaVersion{13, 0}));
  EXPECT_EQ(release, "13.0.88");
  EXPECT_FALSE(parse_nvcc_version("gcc (Debian 12.2.0)", version, release));
  auto ccs = parse_gpu_list("sm_75\nsm_80\nsm_100\nsm_110 sm_103\nsm_120\n");
  std::vector<ComputeCapability> expected = {{7, 5}, {8, 0}, {10, 0}, {10, 3}, {11, 0}, {12, 0}};
  EXPECT_EQ(ccs, expected);
}

TEST(InstalledToolkit, TableAgreesWithTheInstalledNvcc) {
  const char* nvcc = "/usr/local/cuda/bin/nvcc";
  if (!std::filesystem::exists(nvcc)) GTEST_SKIP() << "no nvcc at " << nvcc;
  auto installed = describe_toolkit(nvcc);
  auto t = table();
  const auto* facts = t.find(installed.version);
  ASSERT_NE(facts, nullptr) << "archbuild ships no table for the installed CUDA " << installed.release;
  EXPECT_EQ(facts->targets, installed.sass_targets) << "toolchains/ disagrees with nvcc --list-gpu-code";
  EXPECT_EQ(facts->targets, installed.ptx_targets) << "toolchains/ disagrees with nvcc --list-gpu-arch";
  auto chain = toolchain_from_installed(installed, t);
  EXPECT_TRUE(chain.notes.empty());
  EXPECT_EQ(chain.facts.arch_specific, facts->arch_specific);
}
