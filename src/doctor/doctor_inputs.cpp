#include "doctor/doctor_inputs.h"

#include "arch/arch_target.h"
#include "core/error.h"
#include "core/system_info.h"
#include "doctor/cached_builds.h"
#include "doctor/distribution_info.h"
#include "process/run_process.h"
#include "toolchain/installed_toolkit.h"

namespace archbuild {

DoctorDevices devices_to_diagnose(const std::vector<ComputeCapability>& given, const ToolkitTable& table,
                                  const GpuReport& gpus) {
  for (const auto& cc : given)
    if (!table.knows(cc, ArchVariant::plain))
      fail_bad_input("--device-cc " + cc.dotted() + ": no CUDA release archbuild knows targets a GPU of CC " +
                     cc.dotted() + " (a typo?)");
  if (given.empty()) return {gpus.distinct_ccs(), true};
  return {given, false};
}

CudaVersion cuda_of_driver_option(const std::string& driver, const ToolkitTable& table) {
  auto driver_cuda = table.newest_for_driver(driver);
  if (!driver_cuda)
    fail_bad_input("--driver " + (driver.size() > 40 ? driver.substr(0, 40) + "..." : driver) +
                   ": not a driver version (such as 580.65.06), or older than every CUDA release archbuild knows "
                   "(the oldest needs " +
                   table.all().front().min_driver + ")");
  return *driver_cuda;
}

std::string machine_to_judge(const std::string& machine_option, const std::string& interpreter_machine) {
  if (!machine_option.empty()) return machine_option;
  return !interpreter_machine.empty() ? interpreter_machine : host_machine();
}

std::optional<CudaVersion> nvcc_on_path_version() {
  auto nvcc = find_on_path("nvcc");
  if (!nvcc) return std::nullopt;
  const auto release = probe_nvcc_version(*nvcc);
  if (!release) return std::nullopt;
  return release->version;
}

CompatMatrix doctor_matrix(const DoctorFacts& facts) {
  const auto machine = machine_to_judge(facts.machine_option);
  return compatibility_matrix(facts.official->for_machine(machine), built_for(*facts.cached, machine), facts.devices,
                              facts.driver_cuda);
}

DiagnosisInputs diagnosis_inputs(const DoctorFacts& facts, const PythonEnvironment& python,
                                 const std::vector<PackageBinaries>& packages, std::optional<CudaVersion> nvcc_on_path,
                                 OfficialBuildTable& official_here) {
  DiagnosisInputs inputs;
  inputs.python = &python;
  inputs.packages = &packages;
  inputs.devices = facts.devices;
  inputs.driver_cuda = facts.driver_cuda;
  inputs.nvcc_on_path = nvcc_on_path;
  inputs.table = facts.table;
  // The official builds that install into this interpreter: its CPU's.
  const auto machine = machine_to_judge(facts.machine_option, python.machine);
  official_here = facts.official->for_machine(machine);
  inputs.official = &official_here;
  inputs.cached_torch = built_for(*facts.cached, machine);
  for (const auto& package : packages)
    if (auto distribution = distribution_of(package.site_dir, package.name))
      inputs.distributions[package.name] = *distribution;
  inputs.build_cuda = facts.build_cuda;
  return inputs;
}

}  // namespace archbuild
