#include "gpu/gpu_probe.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <regex>

#include "core/error.h"
#include "core/strings.h"
#include "gpu/driver_api.h"

namespace archbuild {

std::vector<ComputeCapability> GpuReport::distinct_ccs() const {
  std::vector<ComputeCapability> ccs;
  for (const auto& device : devices) ccs.push_back(device.cc);
  std::sort(ccs.begin(), ccs.end());
  ccs.erase(std::unique(ccs.begin(), ccs.end()), ccs.end());
  return ccs;
}

namespace {

// The kernel module's version file; NVML would say the same, but this needs no library.
std::string read_kernel_driver_version() {
  std::ifstream file("/proc/driver/nvidia/version");
  std::string line;
  std::getline(file, line);
  static const std::regex version(R"((\d{3}\.\d+(\.\d+)?))");
  std::smatch match;
  if (std::regex_search(line, match, version)) return match[1];
  return {};
}

}  // namespace

GpuReport DriverGpuProbe::probe() const {
  GpuReport report;
  report.driver_version = read_kernel_driver_version();
  std::string why;
  auto api = DriverApi::load(why);
  if (!api) {
    report.unavailable_reason = why;
    return report;
  }
  int driver_number = 0;
  if (api->driver_get_version(&driver_number) == CUDA_SUCCESS && driver_number > 0)
    report.driver_cuda = CudaVersion::from_driver_number(driver_number);

  CUresult status = api->init(0);
  if (status != CUDA_SUCCESS) {
    if (status == CUDA_ERROR_STUB_LIBRARY)
      report.unavailable_reason = "libcuda.so.1 is the toolkit's stub library, not a driver";
    else if (status == CUDA_ERROR_NO_DEVICE)
      report.unavailable_reason = "the driver sees no CUDA device";
    else
      report.unavailable_reason = "cuInit failed: " + api->error_name(status);
    return report;
  }
  int count = 0;
  api->device_get_count(&count);
  for (int i = 0; i < count; ++i) {
    CUdevice device;
    if (api->device_get(&device, i) != CUDA_SUCCESS) continue;
    GpuDevice gpu;
    gpu.index = i;
    char name[256] = {};
    api->device_get_name(name, sizeof name, device);
    gpu.name = name;
    api->device_get_attribute(&gpu.cc.major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
    api->device_get_attribute(&gpu.cc.minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
    size_t bytes = 0;
    api->device_total_mem(&bytes, device);
    gpu.memory_bytes = bytes;
    report.devices.push_back(gpu);
  }
  if (report.devices.empty()) report.unavailable_reason = "the driver sees no CUDA device";
  return report;
}

FakeGpuProbe FakeGpuProbe::from_spec(const std::string& devices, const std::string& driver_cuda) {
  GpuReport report;
  report.driver_cuda = CudaVersion::parse(driver_cuda.empty() ? "13.0" : driver_cuda);
  report.driver_version = "fake";
  int index = 0;
  for (const auto& item : split_any(devices, ",")) {
    auto parts = split_any(item, ":");
    std::optional<ComputeCapability> cc;
    if (parts.size() == 3) cc = ComputeCapability::parse_dotted(parts[1]);
    if (!cc) fail_bad_input("ARCHBUILD_FAKE_GPUS item '" + item + "' is not NAME:M.N:MiB");
    report.devices.push_back({index++, parts[0], *cc, static_cast<uint64_t>(std::stoull(parts[2])) << 20});
  }
  if (report.devices.empty()) report.unavailable_reason = "fake probe with no devices";
  return FakeGpuProbe(report);
}

std::unique_ptr<GpuProbe> make_gpu_probe() {
  const char* fake = std::getenv("ARCHBUILD_FAKE_GPUS");
  if (!fake) return std::make_unique<DriverGpuProbe>();
  const char* driver = std::getenv("ARCHBUILD_FAKE_DRIVER_CUDA");
  std::cerr << "archbuild: note: using fake GPUs from ARCHBUILD_FAKE_GPUS (a test hook)\n";
  return std::make_unique<FakeGpuProbe>(FakeGpuProbe::from_spec(fake, driver ? driver : ""));
}

}  // namespace archbuild
