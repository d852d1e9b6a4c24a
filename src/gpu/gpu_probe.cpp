#include "gpu/gpu_probe.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <regex>

#include <cuda.h>

#include "core/error.h"
#include "core/strings.h"

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

template <typename Fn>
Fn load_symbol(void* library, const char* name) {
  return reinterpret_cast<Fn>(dlsym(library, name));
}

}  // namespace

GpuReport DriverGpuProbe::probe() const {
  GpuReport report;
  report.driver_version = read_kernel_driver_version();
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    report.unavailable_reason = "no NVIDIA driver: libcuda.so.1 cannot be loaded";
    return report;
  }
  using InitFn = CUresult (*)(unsigned int);
  using IntOutFn = CUresult (*)(int*);
  using DeviceGetFn = CUresult (*)(CUdevice*, int);
  using NameFn = CUresult (*)(char*, int, CUdevice);
  using AttrFn = CUresult (*)(int*, CUdevice_attribute, CUdevice);
  using MemFn = CUresult (*)(size_t*, CUdevice);
  using ErrorNameFn = CUresult (*)(CUresult, const char**);
  auto cu_init = load_symbol<InitFn>(library, "cuInit");
  auto cu_driver_version = load_symbol<IntOutFn>(library, "cuDriverGetVersion");
  auto cu_count = load_symbol<IntOutFn>(library, "cuDeviceGetCount");
  auto cu_device = load_symbol<DeviceGetFn>(library, "cuDeviceGet");
  auto cu_name = load_symbol<NameFn>(library, "cuDeviceGetName");
  auto cu_attr = load_symbol<AttrFn>(library, "cuDeviceGetAttribute");
  auto cu_mem = load_symbol<MemFn>(library, "cuDeviceTotalMem_v2");
  auto cu_error_name = load_symbol<ErrorNameFn>(library, "cuGetErrorName");
  if (!cu_init || !cu_driver_version || !cu_count || !cu_device || !cu_name || !cu_attr || !cu_mem) {
    report.unavailable_reason = "libcuda.so.1 lacks the driver API entry points (not a real driver)";
    return report;
  }
  int driver_number = 0;
  if (cu_driver_version(&driver_number) == CUDA_SUCCESS && driver_number > 0)
    report.driver_cuda = CudaVersion::from_driver_number(driver_number);

  CUresult status = cu_init(0);
  if (status != CUDA_SUCCESS) {
    const char* name = "unknown error";
    if (cu_error_name) cu_error_name(status, &name);
    if (status == CUDA_ERROR_STUB_LIBRARY)
      report.unavailable_reason = "libcuda.so.1 is the toolkit's stub library, not a driver";
    else if (status == CUDA_ERROR_NO_DEVICE)
      report.unavailable_reason = "the driver sees no CUDA device";
    else
      report.unavailable_reason = std::string("cuInit failed: ") + name;
    return report;
  }
  int count = 0;
  cu_count(&count);
  for (int i = 0; i < count; ++i) {
    CUdevice device;
    if (cu_device(&device, i) != CUDA_SUCCESS) continue;
    GpuDevice gpu;
    gpu.index = i;
    char name[256] = {};
    cu_name(name, sizeof name, device);
    gpu.name = name;
    cu_attr(&gpu.cc.major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
    cu_attr(&gpu.cc.minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
    size_t bytes = 0;
    cu_mem(&bytes, device);
    gpu.memory_bytes = bytes;
    report.devices.push_back(gpu);
  }
  if (report.devices.empty()) report.unavailable_reason = "the driver sees no CUDA device";
  // The library stays loaded: unloading a CUDA driver mid-process is not supported.
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
    if (!cc)
      fail_bad_input("ARCHBUILD_FAKE_GPUS item '" + item + "' is not NAME:M.N:MiB");
    report.devices.push_back(
        {index++, parts[0], *cc, static_cast<uint64_t>(std::stoull(parts[2])) << 20});
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
