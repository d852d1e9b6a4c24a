#include "builder/known_build_failures.h"

#include <gtest/gtest.h>

namespace archbuild {
namespace {

// The lines as the compilers wrote them in real builds: torch-lap-cuda 0.0.3 (nvcc),
// dcnv2 0.4 (GCC through nvcc), and a GCC build of a file reading cudaDeviceProp.
TEST(KnownBuildFailures, NamesTheRemovedApiAndTheWayOn) {
  const auto cub = known_build_failure_hint(
      "../../csrc/LAP/lap_kernels.cuh(174): error: namespace \"cub\" has no member \"Max\"\n"
      "3 errors detected in the compilation of \"../../csrc/lap_torch.cu\".\n");
  EXPECT_NE(cub.find("CCCL 3 (CUDA 13) removed"), std::string::npos) << cub;
  EXPECT_NE(cub.find("--cuda 12.9"), std::string::npos) << cub;
  EXPECT_NE(cub.find("cuda::maximum<>{}"), std::string::npos) << cub;

  const auto thc = known_build_failure_hint(
      "src/cuda/dcn_v2_cuda.cu:7:10: fatal error: THC/THC.h: No such file or directory\n    7 | #include "
      "<THC/THC.h>\n");
  EXPECT_NE(thc.find("torch removed in 1.11"), std::string::npos) << thc;

  const auto prop = known_build_failure_hint(
      "csrc/info.cpp:12:18: error: 'struct cudaDeviceProp' has no member named 'clockRate'\n");
  EXPECT_NE(prop.find("cudaDeviceProp fields CUDA 13 removed"), std::string::npos) << prop;

  // flash-attn 2.8.3's setup.py in a snapshot of a plain copy of its tree
  const auto submodule = known_build_failure_hint(
      "error: pathspec 'csrc/composable_kernel' did not match any file(s) known to git\n"
      "subprocess.CalledProcessError: Command '['git', 'submodule', 'update', '--init', "
      "'csrc/composable_kernel']' returned non-zero exit status 1.\n");
  EXPECT_NE(submodule.find("runs `git submodule update`"), std::string::npos) << submodule;
  EXPECT_NE(submodule.find("git clone --recursive"), std::string::npos) << submodule;
  // git's words alone (a version script's `git ls-files --error-unmatch`) say nothing
  EXPECT_EQ(known_build_failure_hint("error: pathspec 'VERSION' did not match any file(s) known to git\n"), "");
}

TEST(KnownBuildFailures, SaysNothingOfOtherFailures) {
  EXPECT_EQ(known_build_failure_hint("cpu/src/neighbors.cpp:47:10: error: 'unique_ptr' is not a member of 'std'\n"),
            "");
  EXPECT_EQ(known_build_failure_hint(""), "");
  // a mention that is no error of the compiler's: "cub" and "Max" apart
  EXPECT_EQ(known_build_failure_hint("using cub::DeviceReduce::Max from CCCL\n"), "");
}

}  // namespace
}  // namespace archbuild
