#include "gpu/driver_api.h"

#include <dlfcn.h>

namespace archbuild {

namespace {
template <typename Fn>
void resolve(void* library, Fn& slot, const char* name) {
  slot = reinterpret_cast<Fn>(dlsym(library, name));
}
}  // namespace

std::optional<DriverApi> DriverApi::load(std::string& why) {
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    why = "no NVIDIA driver: libcuda.so.1 cannot be loaded";
    return std::nullopt;
  }
  DriverApi api;
  resolve(library, api.init, "cuInit");
  resolve(library, api.driver_get_version, "cuDriverGetVersion");
  resolve(library, api.device_get_count, "cuDeviceGetCount");
  resolve(library, api.device_get, "cuDeviceGet");
  resolve(library, api.device_get_name, "cuDeviceGetName");
  resolve(library, api.device_get_attribute, "cuDeviceGetAttribute");
  resolve(library, api.device_total_mem, "cuDeviceTotalMem_v2");
  resolve(library, api.get_error_name, "cuGetErrorName");
  resolve(library, api.primary_ctx_retain, "cuDevicePrimaryCtxRetain");
  resolve(library, api.primary_ctx_release, "cuDevicePrimaryCtxRelease_v2");
  resolve(library, api.ctx_set_current, "cuCtxSetCurrent");
  resolve(library, api.module_load_data, "cuModuleLoadData");
  resolve(library, api.module_unload, "cuModuleUnload");
  if (!api.init || !api.driver_get_version || !api.device_get_count || !api.device_get || !api.device_get_name ||
      !api.device_get_attribute || !api.device_total_mem) {
    why = "libcuda.so.1 lacks the driver API entry points (not a real driver)";
    return std::nullopt;
  }
  return api;
}

std::string DriverApi::error_name(CUresult status) const {
  const char* name = nullptr;
  if (get_error_name && get_error_name(status, &name) == CUDA_SUCCESS && name) return name;
  return "CUresult " + std::to_string(static_cast<int>(status));
}

}  // namespace archbuild
