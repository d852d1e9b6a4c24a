#include "toolchain/host_compiler.h"

#include <filesystem>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "test_support.h"
#include "toolchain/installed_toolkit.h"
#include "toolchain/toolchain.h"

using namespace archbuild;

TEST(HostCompiler, ReadsLimitsFromHostConfig) {
  std::string header =
      "#if (__GRCO_CLANG_COMPILER__ == 1) && ((__clang_major__ < 16) || (__clang_major__ > 20))\n"
      "#if __GNUC__ > 15\n#error -- unsupported GNU version!\n#endif\n"
      "#if (__clang_major__ >= 21) || (__clang_major__ < 3)\n";
  EXPECT_EQ(parse_host_config_limit(header, "gcc"), 15);
  EXPECT_EQ(parse_host_config_limit(header, "clang"), 20);
  EXPECT_EQ(parse_host_config_limit("nothing", "gcc"), std::nullopt);
}

TEST(HostCompiler, RealCompilerAgainstInstalledHeader) {
  if (!std::filesystem::exists("/usr/local/cuda/bin/nvcc")) GTEST_SKIP() << "no nvcc";
  auto chain = toolchain_from_installed(describe_toolkit("/usr/local/cuda/bin/nvcc"), table());
  auto host = detect_host_compiler(chain);
  EXPECT_GT(host.major, 0);
  ASSERT_TRUE(host.max_major.has_value());
  EXPECT_NE(host.limit_source.find("host_config.h"), std::string::npos);
}
