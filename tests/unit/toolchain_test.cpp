#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "gpu/gpu_probe.h"
#include "preflight/preflight.h"
#include "toolchain/host_compiler.h"
#include "toolchain/installed_toolkit.h"
#include "toolchain/toolchain.h"

using namespace archbuild;

namespace {
ToolkitTable table() { return ToolkitTable::load(ARCHBUILD_SOURCE_DIR "/toolchains"); }

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
  std::ofstream(dir / "cuda-13.0.toml") << "cuda = [\n";
  EXPECT_THROW(ToolkitTable::load(dir), UserError);
  std::filesystem::remove_all(dir);
}

TEST(InstalledToolkit, ParsesNvccOutput) {
  CudaVersion version;
  std::string release;
  ASSERT_TRUE(parse_nvcc_version(
      "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 13.0, V13.0.88\n",
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

TEST(Toolchain, InstalledNvccWinsOverTheTable) {
  InstalledToolkit fake;
  fake.version = {13, 2};
  fake.release = "13.2.78";
  fake.sass_targets = {{7, 5}, {9, 0}, {12, 0}};
  fake.ptx_targets = fake.sass_targets;
  auto chain = toolchain_from_installed(fake, table());
  EXPECT_EQ(chain.facts.targets, fake.sass_targets);
  std::vector<ComputeCapability> a = {{9, 0}, {12, 0}};
  EXPECT_EQ(chain.facts.arch_specific, a);
  EXPECT_EQ(chain.facts.min_driver, "580.65.06");
  ASSERT_EQ(chain.notes.size(), 1u);
  EXPECT_NE(chain.notes[0].find("13.0"), std::string::npos);
  EXPECT_EQ(chain.key_string(), "13.2.78");  // the exact release, not 13.2
}

TEST(Toolchain, SelectByVersion) {
  auto t = table();
  InstalledToolkit a, b;
  a.version = {13, 0};
  a.sass_targets = {{9, 0}};
  b.version = {13, 2};
  b.sass_targets = {{12, 0}};
  std::vector<InstalledToolkit> installed = {a, b};
  EXPECT_EQ(select_toolchain(installed, t, std::nullopt).version(), (CudaVersion{13, 0}));
  EXPECT_EQ(select_toolchain(installed, t, CudaVersion{13, 2}).version(), (CudaVersion{13, 2}));
  auto table_only = select_toolchain(installed, t, CudaVersion{12, 9});
  EXPECT_FALSE(table_only.installed.has_value());
  EXPECT_EQ(table_only.key_string(), "12.9");
  EXPECT_TRUE(table_only.facts.can_target({5, 0}, ArchVariant::plain));
  EXPECT_THROW(select_toolchain(installed, t, CudaVersion{9, 9}), UserError);
  try {
    select_toolchain({}, t, std::nullopt);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), ExitCode::environment);
  }
}

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

TEST(Preflight, DriverCheckVerdicts) {
  Toolchain chain;
  chain.facts = *table().find({13, 0});
  GpuReport gpus;
  EXPECT_EQ(check_driver(chain, gpus).verdict, Verdict::skip);
  gpus.driver_cuda = CudaVersion{13, 0};
  EXPECT_EQ(check_driver(chain, gpus).verdict, Verdict::ok);
  gpus.driver_cuda = CudaVersion{12, 8};
  auto old = check_driver(chain, gpus);
  EXPECT_EQ(old.verdict, Verdict::fail);
  EXPECT_NE(old.detail.find("580.65.06"), std::string::npos) << old.detail;
  chain.facts.version = {13, 2};
  gpus.driver_cuda = CudaVersion{13, 0};
  EXPECT_EQ(check_driver(chain, gpus).verdict, Verdict::warn);
}

TEST(Preflight, Helpers) {
  EXPECT_LT(compare_driver_versions("580.65.06", "580.159.04"), 0);
  EXPECT_GT(compare_driver_versions("590.1", "580.159.04"), 0);
  EXPECT_EQ(compare_driver_versions("570.26", "570.26.0"), 0);
  EXPECT_EQ(first_error_line("In file included\nnvcc fatal   : Unsupported gpu architecture 'compute_50'\n"),
            "nvcc fatal   : Unsupported gpu architecture 'compute_50'");
}

TEST(GpuProbe, FakeSpec) {
  auto probe = FakeGpuProbe::from_spec("NVIDIA H200:9.0:143771,RTX 5090:12.0:32607", "13.0");
  auto report = probe.probe();
  ASSERT_EQ(report.devices.size(), 2u);
  EXPECT_EQ(report.devices[1].cc, (ComputeCapability{12, 0}));
  EXPECT_EQ(report.distinct_ccs().size(), 2u);
  EXPECT_THROW(FakeGpuProbe::from_spec("H200:9:1", "13.0"), UserError);
}

TEST(GpuProbe, RealProbeNeverThrowsAndExplainsAbsence) {
  auto report = DriverGpuProbe().probe();
  if (report.devices.empty()) EXPECT_FALSE(report.unavailable_reason.empty());
}
