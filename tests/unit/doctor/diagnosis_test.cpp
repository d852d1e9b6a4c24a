#include "doctor/diagnosis.h"

#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "arch/arch_target.h"
#include "arch/compat.h"
#include "arch/compute_capability.h"
#include "arch/cuda_version.h"
#include "binary/binary_inventory.h"
#include "binary/fatbin.h"
#include "doctor/diagnosis_output.h"
#include "doctor/package_scan.h"
#include "doctor/python_probe.h"
#include "toolchain/toolkit_facts.h"

using namespace archbuild;

namespace {

BinaryInventory library(const std::string& path, std::vector<KernelImage> images) {
  BinaryInventory inventory;
  inventory.path = path;
  inventory.format = "shared object";
  inventory.containers = 1;
  for (auto image : images) {
    FatbinEntry entry;
    entry.image = image;
    inventory.entries.push_back(entry);
  }
  return inventory;
}

KernelImage sass(int major, int minor) { return {KernelImage::Kind::sass, {major, minor}, ArchVariant::plain}; }
KernelImage ptx(int major, int minor) { return {KernelImage::Kind::ptx, {major, minor}, ArchVariant::plain}; }

struct Fixture {
  // Text renderings are compared uncoloured, even in a terminal.
  bool no_color = setenv("NO_COLOR", "1", 1) == 0;
  ToolkitTable table = ToolkitTable::load(ARCHBUILD_SOURCE_DIR "/toolchains");
  PythonEnvironment python;
  std::vector<PackageBinaries> packages;
  Fixture() {
    python.interpreter = "python3";
    python.torch_dir = "/site/torch";
    python.torch_dirs = {"/site/torch"};
    python.torch_version = "2.9.1+cu130";
    python.torch_cuda = "13.0";
    python.import_ok = true;
    packages.push_back({"torch", "/site", {library("/site/torch/lib/libtorch_cuda.so", {sass(8, 0), sass(9, 0)})}});
    packages.push_back({"myext", "/site", {library("/site/myext/_C.so", {ptx(8, 0)})}});
  }
  Diagnosis run(std::vector<ComputeCapability> devices, std::optional<CudaVersion> driver = CudaVersion{13, 0},
                std::optional<CudaVersion> nvcc = std::nullopt,
                std::map<std::string, DistributionInfo> distributions = {}) {
    DiagnosisInputs in;
    in.python = &python;
    in.packages = &packages;
    in.devices = std::move(devices);
    in.driver_cuda = driver;
    in.nvcc_on_path = nvcc;
    in.table = &table;
    in.build_cuda = CudaVersion{13, 0};
    in.distributions = std::move(distributions);
    return diagnose(in);
  }
};

}  // namespace

TEST(Diagnosis, OkAndPtxJit) {
  Fixture f;
  auto d = f.run({{9, 0}});
  EXPECT_EQ(d.packages[0].verdict, PackageVerdict::ok);
  EXPECT_EQ(d.packages[1].verdict, PackageVerdict::ptx_jit);
  EXPECT_FALSE(d.has_problem());
  ASSERT_FALSE(d.packages[1].fixes.empty());
  // no *.dist-info names it: no runnable source line, said plainly with what to run from its source
  EXPECT_TRUE(d.packages[1].fixes[0].lines.empty());
  EXPECT_NE(d.packages[1].fixes[0].why.find("archbuild build DIR --arch 9.0"), std::string::npos);
}

TEST(Diagnosis, NoKernelImageNamesFileArchAndFix) {
  Fixture f;
  auto d = f.run({{12, 0}});
  EXPECT_EQ(d.packages[0].verdict, PackageVerdict::no_kernel_image);
  EXPECT_TRUE(d.has_problem());
  ASSERT_EQ(d.packages[0].fixes.size(), 2u);  // no official table here: "none", then the source build
  EXPECT_EQ(d.packages[0].fixes[0].kind, Fix::Kind::official_build);
  EXPECT_TRUE(d.packages[0].fixes[0].lines.empty());
  EXPECT_EQ(d.packages[0].fixes[1].lines, std::vector<std::string>{"archbuild torch --arch 12.0 --ref v2.9.1"});
  EXPECT_NE(d.packages[0].problems[0].find("libtorch_cuda.so"), std::string::npos);
  EXPECT_NE(d.packages[0].problems[0].find("sm_80 sm_90"), std::string::npos) << d.packages[0].problems[0];
}

TEST(Diagnosis, FixAddsCudaWhenTheToolkitCannotTarget) {
  Fixture f;
  auto d = f.run({{6, 1}, {9, 0}});
  EXPECT_EQ(d.packages[0].verdict, PackageVerdict::no_kernel_image);
  EXPECT_EQ(d.packages[0].fixes.back().lines[0], "archbuild torch --arch \"6.1;9.0\" --ref v2.9.1 --cuda 12.9");
  EXPECT_EQ(d.packages[1].verdict, PackageVerdict::no_kernel_image);  // compute_80 cannot JIT down to 6.1
  f.packages[1].name = "myext";
  DistributionInfo myext{"myext", "1.2.0", "https://github.com/example/myext"};
  auto with_metadata = f.run({{6, 1}, {9, 0}}, CudaVersion{13, 0}, std::nullopt, {{"myext", myext}});
  EXPECT_EQ(with_metadata.packages[1].fixes.back().lines,
            (std::vector<std::string>{"archbuild build pypi:myext==1.2.0 --arch 6.1 --cuda 12.9",
                                      "archbuild build https://github.com/example/myext --arch 6.1 --cuda 12.9"}));
}

TEST(Diagnosis, PtxFromANewerToolkitThanTheDriverIsDriverTooOld) {
  Fixture f;
  f.python.torch_cuda = "13.2";
  auto d = f.run({{9, 0}}, CudaVersion{13, 0});
  EXPECT_EQ(d.packages[0].verdict, PackageVerdict::ok);  // SASS: minor-version compatibility
  EXPECT_EQ(d.packages[1].verdict, PackageVerdict::driver_too_old);
  EXPECT_TRUE(d.has_problem());
  EXPECT_EQ(d.packages[1].fixes.front().kind, Fix::Kind::driver);
  EXPECT_NE(d.packages[1].fixes.front().lines[0].find("580.65.06"), std::string::npos);
}

TEST(Diagnosis, DriverOfAnOlderMajorIsAProblem) {
  Fixture f;
  auto d = f.run({{9, 0}}, CudaVersion{12, 8});
  EXPECT_TRUE(d.has_problem());
  bool found = false;
  for (const auto& finding : d.findings)
    if (finding.is_problem && finding.fix.find("580.65.06") != std::string::npos) found = true;
  EXPECT_TRUE(found);
}

TEST(Diagnosis, MixedEnvironmentWarnings) {
  Fixture f;
  f.python.torch_dirs = {"/site/torch", "/home/u/.local/site/torch"};
  f.python.import_ok = false;
  f.python.import_error = "OSError: libcudart.so.13: cannot open shared object file";
  auto d = f.run({{9, 0}}, CudaVersion{13, 0}, CudaVersion{12, 4});
  std::string all;
  for (const auto& finding : d.findings) all += finding.message + "\n";
  EXPECT_NE(all.find("2 torch installs"), std::string::npos) << all;
  EXPECT_NE(all.find("(shadowed)"), std::string::npos) << all;
  EXPECT_NE(all.find("libcudart"), std::string::npos) << all;
  EXPECT_NE(all.find("nvcc on PATH is CUDA 12.4"), std::string::npos) << all;
  EXPECT_FALSE(d.has_problem());  // warnings only
}

TEST(Diagnosis, TegraDeviceNeedsItsOwnCode) {
  Fixture f;
  auto d = f.run({{8, 7}});
  EXPECT_EQ(d.packages[0].verdict, PackageVerdict::no_kernel_image);
  EXPECT_NE(d.packages[0].problems[0].find("sm_87 exactly"), std::string::npos) << d.packages[0].problems[0];
}

TEST(Diagnosis, NvidiaLibrariesAreShownNotJudged) {
  Fixture f;
  f.packages.push_back({"nvidia/cufft", "/site", {library("/site/nvidia/cufft/lib/libcufft.so.12", {sass(7, 5)})}});
  auto d = f.run({{9, 0}});
  EXPECT_EQ(d.packages[2].verdict, PackageVerdict::not_judged);  // its sm_75 SASS alone would be no-kernel-image
  EXPECT_FALSE(d.packages[2].judged());
  EXPECT_TRUE(d.packages[2].problems.empty());
  EXPECT_TRUE(d.packages[2].fixes.empty());
  EXPECT_FALSE(d.has_problem());
  EXPECT_EQ(package_json(d.packages[2])["verdict"], "not-judged");
  EXPECT_EQ(package_text(d.packages[2]),
            "  not-judged       nvidia/cufft   1 CUDA library (NVIDIA library: may load kernels at run time; fatbins "
            "shown, not judged)\n");
}

TEST(Diagnosis, APackageWithNoCudaCodeToJudgeIsNotJudgedInTextAndJson) {
  Fixture f;
  BinaryInventory unreadable;
  unreadable.path = "/site/broken/_C.so";
  unreadable.error = "truncated ELF";
  f.packages.push_back({"broken", "/site", {unreadable}});
  auto d = f.run({{9, 0}});
  ASSERT_EQ(d.packages.size(), 3u);
  const auto& broken = d.packages[2];
  EXPECT_EQ(broken.verdict, PackageVerdict::not_judged);
  EXPECT_FALSE(d.has_problem());
  auto json = package_json(broken);
  EXPECT_EQ(json["verdict"], "not-judged");
  EXPECT_EQ(json["judged"], false);
  EXPECT_EQ(package_text(broken),
            "  not-judged       broken         0 CUDA libraries (none of its CUDA code could be read)\n");
  // No device to judge for: nothing is judged either.
  d = f.run({});
  for (const auto& package : d.packages) EXPECT_EQ(package.verdict, PackageVerdict::not_judged) << package.name;
}

TEST(Diagnosis, TextAndJsonNameTheSameVerdict) {
  Fixture f;
  f.packages.push_back({"nvidia/cufft", "/site", {library("/site/nvidia/cufft/lib/libcufft.so.12", {sass(7, 5)})}});
  for (std::vector<ComputeCapability> devices :
       {std::vector<ComputeCapability>{{9, 0}}, {{12, 0}}, {{6, 1}, {9, 0}}, {}}) {
    for (const auto& package : f.run(devices).packages) {
      const auto word = to_string(package.verdict);
      EXPECT_EQ(package_json(package)["verdict"], word) << package.name;
      EXPECT_EQ(package_json(package)["judged"], package.judged()) << package.name;
      EXPECT_EQ(package_text(package).rfind("  " + word + " ", 0), 0u) << package_text(package);
    }
  }
}
