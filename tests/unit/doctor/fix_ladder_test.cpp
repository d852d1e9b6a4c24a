#include "doctor/fix_ladder.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <toml++/toml.h>

#include "doctor/compat_matrix.h"
#include "doctor/official_builds.h"
#include "toolchain/toolkit_facts.h"

using namespace archbuild;

namespace {

const OfficialBuildTable& every_official_build() {
  static const auto loaded = OfficialBuildTable::load(ARCHBUILD_SOURCE_DIR "/toolchains/torch/official_builds.toml");
  return loaded;
}

// The x86-64 wheels, which the fix ladder's cases below are about.
const OfficialBuildTable& official_table() {
  static const auto x86_64 = every_official_build().for_machine("x86_64");
  return x86_64;
}

std::vector<Fix> fixes_for(std::vector<ComputeCapability> devices, std::optional<CudaVersion> driver,
                           std::string python = "3.12", const OfficialBuildTable* official = nullptr) {
  TorchFixInputs in;
  in.devices = std::move(devices);
  in.driver_cuda = driver;
  in.python_version = std::move(python);
  in.companions = {"torchvision"};
  in.official = official ? official : &official_table();
  in.source_command = "archbuild torch --arch X";
  return torch_fixes(in);
}

// The first fix's kind and, for an official build, the pip line's package and index.
std::string first(const std::vector<Fix>& fixes) {
  const auto& fix = fixes.front();
  if (fix.lines.empty()) return to_string(fix.kind) + ": none";
  return to_string(fix.kind) + ": " + fix.lines.front();
}

}  // namespace

TEST(OfficialBuilds, EveryReleaseOfTheTorchRecipeIsInTheTable) {
  auto recipe = toml::parse_file(ARCHBUILD_SOURCE_DIR "/recipes/torch.toml");
  auto releases = official_table().releases();
  std::set<std::string> known(releases.begin(), releases.end());
  auto* listed = recipe["releases"].as_array();
  ASSERT_NE(listed, nullptr);
  for (const auto& release : *listed)
    EXPECT_TRUE(known.count(*release.value<std::string>())) << *release.value<std::string>();
  // the recipe's default (the newest release) is the table's newest
  auto default_ref = recipe["default_ref"].value<std::string>();
  ASSERT_TRUE(default_ref);
  EXPECT_EQ("v" + releases.front(), *default_ref);
}

TEST(OfficialBuilds, Aarch64WheelsHaveTheirOwnRowsAndArchList) {
  auto aarch64 = every_official_build().for_machine("aarch64");
  ASSERT_FALSE(aarch64.all().empty());
  EXPECT_EQ(aarch64.releases(), (std::vector<std::string>{"2.11.0", "2.10.0", "2.9.1", "2.9.0"}));
  EXPECT_EQ(aarch64.all().size() + official_table().all().size(), every_official_build().all().size());
  const auto& newest = aarch64.all().front();  // 2.11.0+cu130, inspected on PyPI
  EXPECT_EQ(newest.variant(), "cu130");
  EXPECT_TRUE(newest.inspected);
  EXPECT_EQ(newest.verdict_for({11, 0}), RunVerdict::native);  // Jetson Thor
  EXPECT_EQ(newest.verdict_for({12, 1}), RunVerdict::native);  // GB10
  EXPECT_EQ(newest.verdict_for({7, 5}), RunVerdict::no_kernel_image);
  // Thor's fix on aarch64 is that wheel; on x86-64 there is none.
  auto fixes = fixes_for({{11, 0}}, CudaVersion{13, 0}, "3.12", &aarch64);
  EXPECT_EQ(first(fixes),
            "official-build: pip install torch==2.11.0 torchvision==0.26.0 --index-url "
            "https://download.pytorch.org/whl/cu130");
  EXPECT_EQ(first(fixes_for({{11, 0}}, CudaVersion{13, 0})), "official-build: none");
}

TEST(OfficialBuilds, EveryVariantParsesAndIsSortedNewestFirst) {
  const auto& all = every_official_build().all();
  ASSERT_GT(all.size(), 30u);
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_FALSE(all[i].targets.empty()) << all[i].torch;
    EXPECT_FALSE(all[i].python.empty()) << all[i].torch;
    EXPECT_EQ(all[i].index_url(), "https://download.pytorch.org/whl/" + all[i].variant());
    if (i > 0) {
      EXPECT_GE(compare_release(all[i - 1].torch, all[i].torch), 0);
    }
  }
  // the published 2.11.0 cu130 wheel holds no PTX although the script's main-branch list says +PTX
  for (const auto& build : official_table().all())
    if (build.torch == "2.11.0" && build.variant() == "cu130") {
      EXPECT_TRUE(build.inspected);
      EXPECT_EQ(build.verdict_for({12, 1}), RunVerdict::native);  // sm_120 runs on 12.1
      EXPECT_EQ(build.verdict_for({11, 0}), RunVerdict::no_kernel_image);
      EXPECT_EQ(build.verdict_for({6, 1}), RunVerdict::no_kernel_image);
    }
}

TEST(OfficialBuilds, ABadEntryNamesFileLineAndKey) {
  auto dir = std::filesystem::temp_directory_path() / "archbuild-official-test";
  std::filesystem::create_directories(dir);
  auto file = dir / "official.toml";
  {
    std::ofstream out(file);
    out << "[[release]]\ntorch = \"2.1x\"\npython = [\"3.12\"]\nsource = \"s\"\n";
  }
  try {
    OfficialBuildTable::load(file);
    FAIL() << "accepted a bad release";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("official.toml:1: key 'torch'"), std::string::npos) << e.what();
  }
  // a misspelt key is refused, not read as an x86-64 row
  {
    std::ofstream out(file);
    out << "[[release]]\ntorch = \"2.11.0\"\npython = [\"3.12\"]\nsource = \"s\"\n[[release.variant]]\n"
        << "machnie = \"aarch64\"\ncuda = \"13.0\"\narch_list = \"11.0\"\n";
  }
  try {
    OfficialBuildTable::load(file);
    FAIL() << "accepted a misspelt key";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("official.toml:6: key 'machnie': unknown key"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

TEST(FixLadder, CheapestFixPerDeviceAndDriver) {
  const CudaVersion cuda13{13, 0}, cuda12_8{12, 8}, cuda12_4{12, 4}, cuda11_8{11, 8};
  struct Case {
    ComputeCapability device;
    CudaVersion driver;
    std::string expected;
  };
  const std::vector<Case> cases = {
      // Pascal and Volta: CUDA 13 dropped them; the cu126 builds hold sm_60 and sm_70
      {{6, 1},
       cuda13,
       "official-build: pip install torch==2.13.0 torchvision==0.28.0 --index-url "
       "https://download.pytorch.org/whl/cu126"},
      {{7, 0},
       cuda13,
       "official-build: pip install torch==2.13.0 torchvision==0.28.0 --index-url "
       "https://download.pytorch.org/whl/cu126"},
      {{8, 6}, cuda13, "official-build: pip install torch==2.15.0 --index-url https://download.pytorch.org/whl/cu130"},
      {{9, 0}, cuda13, "official-build: pip install torch==2.15.0 --index-url https://download.pytorch.org/whl/cu130"},
      {{10, 3}, cuda13, "official-build: pip install torch==2.15.0 --index-url https://download.pytorch.org/whl/cu130"},
      {{11, 0}, cuda13, "official-build: none"},  // no x86-64 wheel holds sm_110
      {{12, 0}, cuda13, "official-build: pip install torch==2.15.0 --index-url https://download.pytorch.org/whl/cu130"},
      {{12, 1}, cuda13, "official-build: pip install torch==2.15.0 --index-url https://download.pytorch.org/whl/cu130"},
      // an older driver: the newest release with a variant of its CUDA major
      {{9, 0},
       cuda12_8,
       "official-build: pip install torch==2.13.0 torchvision==0.28.0 --index-url "
       "https://download.pytorch.org/whl/cu126"},
      {{12, 0},
       cuda12_4,
       "official-build: pip install torch==2.11.0 torchvision==0.26.0 --index-url "
       "https://download.pytorch.org/whl/cu128"},
      {{9, 0},
       cuda11_8,
       "official-build: pip install torch==2.7.1 torchvision==0.22.1 --index-url "
       "https://download.pytorch.org/whl/cu118"},
      {{12, 0}, cuda11_8, "official-build: none"},
  };
  for (const auto& c : cases) {
    auto fixes = fixes_for({c.device}, c.driver);
    EXPECT_EQ(first(fixes), c.expected) << "CC " << c.device.dotted() << " driver CUDA " << c.driver.str();
    EXPECT_EQ(fixes.back().kind == Fix::Kind::driver ? fixes[fixes.size() - 2].kind : fixes.back().kind,
              Fix::Kind::source_build);
  }
}

TEST(FixLadder, TheUvLineAndWhyNoneSaysWhatWouldFit) {
  auto fixes = fixes_for({{9, 0}}, CudaVersion{13, 0});
  EXPECT_EQ(fixes[0].lines[1], "uv pip install torch==2.15.0 --torch-backend=cu130");
  EXPECT_NE(fixes[0].why.find("no torchvision release is paired"), std::string::npos) << fixes[0].why;
  auto old_driver = fixes_for({{12, 0}}, CudaVersion{11, 8});
  EXPECT_NE(old_driver[0].why.find("torch 2.15.0+cu130 would, with a driver for CUDA 13.0"), std::string::npos)
      << old_driver[0].why;
  EXPECT_EQ(old_driver.back().kind, Fix::Kind::driver);
  auto old_python = fixes_for({{12, 0}}, CudaVersion{13, 0}, "3.8");
  EXPECT_NE(old_python[0].why.find("for Python 3.8 (torch 2.15.0+cu130 would, on Python 3.11"), std::string::npos)
      << old_python[0].why;
}

TEST(FixLadder, PtxJitWhenOnlyAnOfficialBuildsPtxCoversTheDevice) {
  OfficialBuild build;
  build.torch = "9.9.0";
  build.python = {"3.12"};
  build.cuda = {13, 0};
  build.targets = {ArchTarget{{9, 0}, ArchVariant::plain, true, true}};  // 9.0+PTX
  auto official = OfficialBuildTable::from({build});
  TorchFixInputs in;
  in.devices = {{10, 0}};
  in.driver_cuda = CudaVersion{13, 0};
  in.python_version = "3.12";
  in.official = &official;
  in.cached = {
      {"9.9.0+cu130.sm100", CudaVersion{13, 0}, {ArchTarget{{10, 0}}}, "pip install torch==9.9.0+cu130.sm100"}};
  in.source_command = "archbuild torch --arch 10.0";
  auto fixes = torch_fixes(in);
  ASSERT_EQ(fixes.size(), 4u);
  EXPECT_TRUE(fixes[0].lines.empty());  // no native official build
  EXPECT_EQ(fixes[1].kind, Fix::Kind::ptx_jit);
  EXPECT_NE(fixes[1].why.find("compute_90 for CC 10.0"), std::string::npos) << fixes[1].why;
  EXPECT_EQ(fixes[2].kind, Fix::Kind::cached_build);
  EXPECT_EQ(fixes[2].lines[0], "pip install torch==9.9.0+cu130.sm100");
  EXPECT_EQ(fixes[3].kind, Fix::Kind::source_build);
  in.driver_cuda = CudaVersion{12, 8};  // PTX of CUDA 13.0 cannot be JIT-compiled by a 12.8 driver
  EXPECT_NE(torch_fixes(in)[1].kind, Fix::Kind::ptx_jit);
}

TEST(FixLadder, CudaVariantNames) {
  EXPECT_EQ(cuda_variant_name("cupy-cuda13x", 12), "cupy-cuda12x");
  EXPECT_EQ(cuda_variant_name("jax-cuda13-plugin", 12), "jax-cuda12-plugin");
  EXPECT_EQ(cuda_variant_name("nvidia-cublas-cu13", 12), "nvidia-cublas-cu12");
  EXPECT_EQ(cuda_major_of_name("cupy-cuda13x"), 13);
  EXPECT_FALSE(cuda_variant_name("torch-scatter", 12));
  EXPECT_FALSE(cuda_major_of_name(std::string(100000, 'a') + "-cu13"));
}

TEST(CompatMatrix, CellsForDevicesAndDriver) {
  auto matrix = compatibility_matrix(official_table(), {}, {{6, 1}, {9, 0}, {12, 1}}, CudaVersion{12, 8});
  auto row = [&](const std::string& build) {
    for (const auto& r : matrix.rows)
      if (r.build == build) return r.cells;
    return std::vector<std::string>{};
  };
  EXPECT_EQ(row("torch 2.15.0+cu130"),
            (std::vector<std::string>{"no-kernel-image", "driver-too-old", "driver-too-old"}));
  EXPECT_EQ(row("torch 2.11.0+cu128"), (std::vector<std::string>{"no-kernel-image", "native", "native"}));
  EXPECT_EQ(row("torch 2.11.0+cu126"), (std::vector<std::string>{"native", "native", "no-kernel-image"}));
  EXPECT_EQ(matrix_json(matrix)["devices"], (std::vector<std::string>{"6.1", "9.0", "12.1"}));
}

TEST(ToolkitTable, NewestCudaForADriver) {
  auto toolkits = ToolkitTable::load(ARCHBUILD_SOURCE_DIR "/toolchains");
  EXPECT_EQ(toolkits.newest_for_driver("580.65.06"), (CudaVersion{13, 0}));
  EXPECT_EQ(toolkits.newest_for_driver("590.1"), (CudaVersion{13, 0}));
  EXPECT_FALSE(toolkits.newest_for_driver("300.1"));
  EXPECT_FALSE(toolkits.newest_for_driver("5x0"));
  EXPECT_FALSE(toolkits.newest_for_driver(""));
}
