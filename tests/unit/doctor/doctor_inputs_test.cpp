#include "doctor/doctor_inputs.h"

#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "arch/arch_target.h"
#include "core/system_info.h"
#include "test_support.h"

namespace archbuild {
namespace {

GpuReport gpus_with_ccs(std::vector<ComputeCapability> ccs) {
  GpuReport report;
  int index = 0;
  for (auto cc : ccs) report.devices.push_back({index++, "GPU " + cc.dotted(), cc, 0});
  return report;
}

OfficialBuild official_torch_for(const std::string& machine) {
  OfficialBuild build;
  build.torch = "2.11.0";
  build.python = {"3.12"};
  build.cuda = {13, 0};
  build.machine = machine;
  build.targets = {ArchTarget{{9, 0}}};
  return build;
}

TEST(DoctorInputs, DevicesAreTheGivenCcsElseTheGpusAndAnUnknownCcIsATypo) {
  const auto toolkits = table();
  const auto gpus = gpus_with_ccs({{9, 0}, {8, 0}, {9, 0}});
  auto devices = devices_to_diagnose({}, toolkits, gpus);
  EXPECT_TRUE(devices.from_gpus);
  EXPECT_EQ(devices.ccs, (std::vector<ComputeCapability>{{8, 0}, {9, 0}}));  // distinct, sorted

  devices = devices_to_diagnose({{12, 0}}, toolkits, gpus);
  EXPECT_FALSE(devices.from_gpus);
  EXPECT_EQ(devices.ccs, (std::vector<ComputeCapability>{{12, 0}}));

  devices = devices_to_diagnose({}, toolkits, gpus_with_ccs({}));
  EXPECT_TRUE(devices.from_gpus);
  EXPECT_TRUE(devices.ccs.empty());  // the caller says there is no GPU to diagnose against

  EXPECT_EQ(error_of([&] {
              devices_to_diagnose({{9, 0}, {1, 0}}, toolkits, gpus);
            }),
            "--device-cc 1.0: no CUDA release archbuild knows targets a GPU of CC 1.0 (a typo?)");
}

TEST(DoctorInputs, ADriverOptionIsTheNewestCudaItSupportsOrRefused) {
  const auto toolkits = table();
  const auto expected = toolkits.newest_for_driver("580.65.06");
  ASSERT_TRUE(expected);
  EXPECT_EQ(cuda_of_driver_option("580.65.06", toolkits), *expected);

  const std::string refused =
      ": not a driver version (such as 580.65.06), or older than every CUDA release "
      "archbuild knows (the oldest needs " +
      toolkits.all().front().min_driver + ")";
  EXPECT_EQ(error_of([&] { cuda_of_driver_option("latest", toolkits); }), "--driver latest" + refused);
  // A long value is cut short in the message.
  EXPECT_EQ(error_of([&] { cuda_of_driver_option(std::string(50, '9'), toolkits); }),
            "--driver " + std::string(40, '9') + "..." + refused);
  EXPECT_EQ(code_of([&] { cuda_of_driver_option("1.0", toolkits); }), ExitCode::bad_input);  // older than all
}

TEST(DoctorInputs, TheMachineIsTheOptionsElseTheInterpretersElseThisHosts) {
  EXPECT_EQ(machine_to_judge("aarch64", "x86_64"), "aarch64");
  EXPECT_EQ(machine_to_judge("", "aarch64"), "aarch64");
  EXPECT_EQ(machine_to_judge("", ""), host_machine());
  EXPECT_EQ(machine_to_judge(""), host_machine());
}

TEST(DoctorInputs, AnInterpretersInputsHoldTheBuildsForItsCpuAndItsDistributions) {
  const auto toolkits = table();
  const auto official = OfficialBuildTable::from({official_torch_for("x86_64"), official_torch_for("aarch64")});
  const std::vector<CachedTorch> cached = {
      {"2.11.0+cu130.sm61", CudaVersion{13, 0}, {ArchTarget{{6, 1}}}, "pip install x86", "x86_64"},
      {"2.11.0+cu130.sm61", CudaVersion{13, 0}, {ArchTarget{{6, 1}}}, "pip install arm", "aarch64"}};
  DoctorFacts facts{&toolkits, &official, &cached, {{6, 1}}, CudaVersion{13, 0}, CudaVersion{12, 9}, ""};

  TempDir site("archbuild-doctor-inputs");
  write(site.path / "demo_ext-1.2.dist-info" / "top_level.txt", "demo_ext\n");
  write(site.path / "demo_ext-1.2.dist-info" / "METADATA", "Name: demo-ext\nVersion: 1.2\n\n");
  PythonEnvironment python;
  python.machine = "aarch64";
  const std::vector<PackageBinaries> packages = {{"demo_ext", site.path.string(), {}},
                                                 {"undistributed", site.path.string(), {}}};

  OfficialBuildTable official_here;
  auto inputs = diagnosis_inputs(facts, python, packages, CudaVersion{12, 8}, official_here);
  EXPECT_EQ(inputs.python, &python);
  EXPECT_EQ(inputs.packages, &packages);
  EXPECT_EQ(inputs.table, &toolkits);
  EXPECT_EQ(inputs.official, &official_here);
  ASSERT_EQ(official_here.all().size(), 1u);
  EXPECT_EQ(official_here.all()[0].machine, "aarch64");
  ASSERT_EQ(inputs.cached_torch.size(), 1u);
  EXPECT_EQ(inputs.cached_torch[0].install_line, "pip install arm");
  EXPECT_EQ(inputs.devices, facts.devices);
  EXPECT_EQ(inputs.driver_cuda, (CudaVersion{13, 0}));
  EXPECT_EQ(inputs.nvcc_on_path, (CudaVersion{12, 8}));
  EXPECT_EQ(inputs.build_cuda, (CudaVersion{12, 9}));
  ASSERT_EQ(inputs.distributions.size(), 1u);
  EXPECT_EQ(inputs.distributions.at("demo_ext").name, "demo-ext");
  EXPECT_EQ(inputs.distributions.at("demo_ext").version, "1.2");

  // --machine outranks the interpreter's CPU.
  facts.machine_option = "x86_64";
  inputs = diagnosis_inputs(facts, python, packages, std::nullopt, official_here);
  ASSERT_EQ(official_here.all().size(), 1u);
  EXPECT_EQ(official_here.all()[0].machine, "x86_64");
  ASSERT_EQ(inputs.cached_torch.size(), 1u);
  EXPECT_EQ(inputs.cached_torch[0].install_line, "pip install x86");
  EXPECT_FALSE(inputs.nvcc_on_path);
}

TEST(DoctorInputs, TheMatrixHasTheMachinesOfficialAndCachedBuildsPerDevice) {
  const auto toolkits = table();
  const auto official = OfficialBuildTable::from({official_torch_for("x86_64"), official_torch_for("aarch64")});
  const std::vector<CachedTorch> cached = {
      {"2.11.0+cu130.sm61", CudaVersion{13, 0}, {ArchTarget{{6, 1}}}, "pip install arm", "aarch64"}};
  const DoctorFacts facts{&toolkits, &official, &cached, {{6, 1}, {9, 0}}, CudaVersion{13, 0}, std::nullopt, "aarch64"};
  const auto matrix = doctor_matrix(facts);
  EXPECT_EQ(matrix.devices, facts.devices);
  ASSERT_EQ(matrix.rows.size(), 2u);
  EXPECT_EQ(matrix.rows[0].origin, "official");
  EXPECT_EQ(matrix.rows[1].origin, "archbuild cache");
  EXPECT_EQ(matrix.rows[1].install, "pip install arm");
  for (const auto& row : matrix.rows) EXPECT_EQ(row.cells.size(), 2u);

  auto elsewhere = facts;
  elsewhere.machine_option = "x86_64";  // the aarch64 build in the cache installs nowhere here
  ASSERT_EQ(doctor_matrix(elsewhere).rows.size(), 1u);
  EXPECT_EQ(doctor_matrix(elsewhere).rows[0].origin, "official");
}

}  // namespace
}  // namespace archbuild
