#pragma once

#include <optional>
#include <string>

#include <cuda.h>

namespace archbuild {

// The CUDA driver API entry points archbuild uses, resolved from
// libcuda.so.1 with dlopen at run time: archbuild links no CUDA library, so
// it runs (and says why there is no GPU) on any machine.
struct DriverApi {
  CUresult (*init)(unsigned int) = nullptr;
  CUresult (*driver_get_version)(int*) = nullptr;
  CUresult (*device_get_count)(int*) = nullptr;
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*device_get_name)(char*, int, CUdevice) = nullptr;
  CUresult (*device_get_attribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  CUresult (*device_total_mem)(size_t*, CUdevice) = nullptr;
  CUresult (*get_error_name)(CUresult, const char**) = nullptr;
  CUresult (*primary_ctx_retain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*primary_ctx_release)(CUdevice) = nullptr;
  CUresult (*ctx_set_current)(CUcontext) = nullptr;
  CUresult (*module_load_data)(CUmodule*, const void*) = nullptr;
  CUresult (*module_unload)(CUmodule) = nullptr;

  // The loaded API, or nullopt with the reason in `why`. The library stays
  // loaded: unloading a CUDA driver mid-process is not supported.
  static std::optional<DriverApi> load(std::string& why);
  // "CUDA_ERROR_NO_BINARY_FOR_GPU"
  std::string error_name(CUresult status) const;
};

}  // namespace archbuild
