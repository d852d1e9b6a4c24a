#include "validate/kernel_census.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "test_support.h"
#include "validate/device_validation.h"

using namespace archbuild;

TEST(KernelCensus, CountsOnlyTheWheelsOwnKernels) {
  TempDir dir;
  write(dir.path / "launches-100.tsv",
        "# archbuild launch recorder 1: cupti libcupti.so.13\n"
        "0\t_Z6muladdPKfS0_fPfi\n"
        "0\t_ZN2at6native29vectorized_elementwise_kernel\n"
        "1\t_Z6muladdPKfS0_fPfi\n");
  write(dir.path / "launches-101.tsv",
        "# archbuild launch recorder 1: cupti libcupti.so.13\n0\tplain_c\nnot a line\n-3\tx\n");
  write(dir.path / "unrelated.txt", "0\t_Z5otherv\n");
  auto records = read_launch_records(dir.path);
  ASSERT_TRUE(records.recorded);
  auto census = take_census({"_Z6muladdPKfS0_fPfi", "plain_c", "_Z5otherv", "_Z6unusedv"}, records);
  EXPECT_EQ(census.wheel_kernels, 4u);
  EXPECT_EQ(census.launched, (std::vector<std::string>{"_Z6muladdPKfS0_fPfi", "plain_c"}));
  EXPECT_EQ(census.devices, (std::set<int>{0, 1}));
  EXPECT_EQ(census.other_kernels, 1u);  // torch's own
  EXPECT_EQ(census.summary(), "launched 2 of 4 kernels of this wheel, on 2 GPUs");
  EXPECT_EQ(census.to_json()["launched"][0]["demangled"], "muladd(float const*, float const*, float, float*, int)");
}

TEST(KernelCensus, NothingLaunchedSaysSoWithoutAGpuCount) {
  TempDir dir;
  write(dir.path / "launches-7.tsv", "# archbuild launch recorder 1: cupti libcupti.so.13\n");
  auto census = take_census({"_Z1kv"}, read_launch_records(dir.path));
  EXPECT_FALSE(census.any_launched());
  EXPECT_EQ(census.summary(), "launched 0 of 1 kernel of this wheel");
}

TEST(KernelCensus, WhyNothingWasRecorded) {
  TempDir dir;
  auto none = read_launch_records(dir.path);
  EXPECT_FALSE(none.recorded);
  EXPECT_NE(none.not_recorded.find("no process"), std::string::npos);
  write(dir.path / "launches-8.tsv", "# unavailable: libcupti.so.13 not found by the loader\n");
  auto unavailable = read_launch_records(dir.path);
  EXPECT_FALSE(unavailable.recorded);
  EXPECT_EQ(unavailable.not_recorded, "libcupti.so.13 not found by the loader");
  auto census = take_census({"_Z1kv"}, unavailable);
  EXPECT_EQ(census.summary(), "kernel launches not counted: libcupti.so.13 not found by the loader");
}

TEST(KernelCensus, TheRecorderIsBuiltBesideTheBinary) {
  // The unit tests run from build/tests; the recorder lives in build/src beside archbuild.
  auto library = std::filesystem::path(ARCHBUILD_TEST_BINARY).parent_path() / "libarchbuild_launch_recorder.so";
  EXPECT_TRUE(std::filesystem::is_regular_file(library)) << library;
}

TEST(KernelCensus, NoKernelsProvesNothingWhenTheImagesCouldNotBeRead) {
  DeviceValidation validation;
  validation.ran = true;
  KernelCensus census;
  census.recorded = true;
  validation.census = census;
  EXPECT_TRUE(validation.kernels_launched());  // a wheel without kernels has nothing to launch
  validation.census->unreadable = true;
  EXPECT_FALSE(validation.kernels_launched());  // its kernels are unknown: not `device`
  validation.census->wheel_kernels = 2;
  validation.census->launched = {"_Z1kv"};
  EXPECT_TRUE(validation.kernels_launched());
}
