#include "toolchain/toolkit_facts.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "arch/arch_target.h"
#include "arch/cuda_version.h"
#include "core/error.h"
#include "core/exit_code.h"
#include "test_support.h"

using namespace archbuild;

namespace {
std::filesystem::path temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("archbuild-unit-" + name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}
}  // namespace

TEST(ToolkitTable, LoadsEveryShippedRelease) {
  auto t = table();
  ASSERT_GE(t.all().size(), 10u);
  for (size_t i = 1; i < t.all().size(); ++i) EXPECT_LT(t.all()[i - 1].version, t.all()[i].version);
  const auto* cuda13 = t.find({13, 0});
  ASSERT_NE(cuda13, nullptr);
  EXPECT_EQ(cuda13->min_driver, "580.65.06");
  EXPECT_TRUE(cuda13->can_target({12, 0}, ArchVariant::plain));
  EXPECT_TRUE(cuda13->can_target({10, 0}, ArchVariant::family_specific));
  EXPECT_FALSE(cuda13->can_target({5, 0}, ArchVariant::plain));
  EXPECT_FALSE(cuda13->can_target({8, 6}, ArchVariant::arch_specific));
  EXPECT_EQ(t.newest_at_or_below({12, 7})->version, (CudaVersion{12, 6}));
  EXPECT_EQ(t.newest_at_or_below({13, 2})->version, (CudaVersion{13, 0}));
  EXPECT_EQ(t.newest_at_or_below({11, 0}), nullptr);
  ASSERT_EQ(cuda13->renamed.size(), 1u);  // Jetson Thor: 10.1 to CUDA 12.x, 11.0 from 13.0
  EXPECT_EQ(cuda13->renamed[0].from, (ComputeCapability{10, 1}));
  EXPECT_EQ(cuda13->renamed[0].to, (ComputeCapability{11, 0}));
  EXPECT_EQ(cuda13->renamed[0].gpu, "Jetson Thor");
  EXPECT_EQ(cuda13->torch_official_arch_list_aarch64, "8.0;9.0;10.0;11.0;12.0+PTX");
}

TEST(ToolkitTable, MalformedFileNamesFileLineAndKey) {
  auto dir = temp_dir("badtable");
  std::ofstream(dir / "cuda-13.0.toml") << "cuda = \"13.0\"\nmin_driver = \"580\"\n"
                                        << "targets = [\"7.5\", 80]\n";
  try {
    ToolkitTable::load(dir);
    FAIL();
  } catch (const UserError& e) {
    std::string text = e.what();
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    EXPECT_NE(text.find("cuda-13.0.toml:3"), std::string::npos) << text;
    EXPECT_NE(text.find("targets"), std::string::npos) << text;
  }
  std::ofstream(dir / "cuda-13.0.toml") << "cuda = \"13.0\"\ntargets = [\"7.5\"]\n";
  try {
    ToolkitTable::load(dir);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("min_driver"), std::string::npos) << e.what();
  }
  for (const char* renamed : {"renamed = [{ from = \"10.1\", to = \"eleven\", gpu = \"Thor\" }]",
                              "renamed = [{ from = \"10.1\", to = \"11.0\" }]", "renamed = \"10.1\"",
                              "renamed = [{ from = \"10.1\", to = \"11.0\", gpu = \"T\", extra = 1 }]",
                              "renamed = [{ from = \"10.1\", to = \"11.0\", gpu = \"T\" }, "
                              "{ from = \"10.1\", to = \"12.1\", gpu = \"T\" }]"}) {
    std::ofstream(dir / "cuda-13.0.toml") << "cuda = \"13.0\"\nmin_driver = \"580\"\ntargets = [\"7.5\"]\n"
                                          << renamed << "\n";
    try {
      ToolkitTable::load(dir);
      ADD_FAILURE() << renamed;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("cuda-13.0.toml:4"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("renamed"), std::string::npos) << e.what();
    }
  }
  std::ofstream(dir / "cuda-13.0.toml") << "cuda = [\n";
  EXPECT_THROW(ToolkitTable::load(dir), UserError);
  std::filesystem::remove_all(dir);
}
