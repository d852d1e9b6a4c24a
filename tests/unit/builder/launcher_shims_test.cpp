#include "builder/launcher_shims.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "process/run_process.h"

using namespace archbuild;

// cpp_extension calls $CUDA_HOME/bin/nvcc: through the launcher toolkit a real
// nvcc compile goes through real ccache, and the second one is a hit.
TEST(LauncherShims, NvccThroughTheLauncherToolkitIsCached) {
  const std::filesystem::path toolkit = "/usr/local/cuda";
  auto ccache = find_on_path("ccache");
  if (!ccache || !std::filesystem::exists(toolkit / "bin" / "nvcc")) GTEST_SKIP() << "needs ccache and " << toolkit;
  auto root = std::filesystem::temp_directory_path() / ("archbuild-shim-" + std::to_string(getpid()));
  std::filesystem::remove_all(root);
  const std::string self = ARCHBUILD_TEST_BINARY;  // the step launcher the shim's nvcc runs
  auto shim = launcher_toolkit_dir(root / "cache", "ccache", toolkit, self);
  EXPECT_NE(shim, launcher_toolkit_dir(root / "cache", "ccache", "/opt/other-cuda", self));
  EXPECT_NE(shim, launcher_toolkit_dir(root / "cache", "ccache", toolkit, "/elsewhere/archbuild"));
  ensure_launcher_toolkit(shim, self, *ccache, toolkit);
  ensure_launcher_toolkit(shim, self, *ccache, toolkit);  // a second build refreshes it in place
  EXPECT_TRUE(std::filesystem::exists(shim / "include" / "cuda_runtime.h"));
  EXPECT_TRUE(std::filesystem::is_symlink(shim / "bin" / "ptxas"));
  std::filesystem::create_directories(root / "src");
  std::ofstream(root / "src" / "k.cu") << "__global__ void k(float* x) { x[threadIdx.x] *= 2.f; }\n";
  ProcessOptions options;
  options.working_dir = root / "src";
  options.env_overrides["CCACHE_DIR"] = (root / "ccache").string();
  options.env_overrides["CCACHE_CONFIGPATH"] = (root / "ccache.conf").string();  // no user config
  auto version = run_process({(shim / "bin" / "nvcc").string(), "--version"}, options);
  EXPECT_NE(version.out.find("Cuda compilation tools"), std::string::npos) << version.err;
  for (int i = 0; i < 2; ++i) {
    auto compiled = run_process({(shim / "bin" / "nvcc").string(), "-arch=sm_90", "-c", "k.cu", "-o", "k.o"}, options);
    ASSERT_TRUE(compiled.succeeded()) << compiled.err;
  }
  auto stats = run_process({ccache->string(), "--print-stats"}, options);
  EXPECT_NE(stats.out.find("direct_cache_hit\t1\n"), std::string::npos) << stats.out;
  EXPECT_NE(stats.out.find("cache_miss\t1\n"), std::string::npos) << stats.out;
  std::filesystem::remove_all(root);
}
