// archbuild's kernel-launch recorder: a CUDA injection library.
//
// Device validation sets CUDA_INJECTION64_PATH to this library and
// ARCHBUILD_LAUNCH_DIR to a directory; the CUDA driver then calls
// InitializeInjection() in every process of the checks when it initialises
// (cuInit). The library subscribes to CUPTI's launch callbacks and appends
// one line per (device, kernel) pair the first time that kernel launches on
// that device (a launch that succeeded), to ARCHBUILD_LAUNCH_DIR/launches-PID.tsv:
//
//   # archbuild launch recorder 1: cupti /path/libcupti.so.13
//   0<TAB>_Z13muladd_kernelPKfS0_fPfi
//
// or, when CUPTI cannot be used, a single "# unavailable: REASON" line.
// Lines are written as they happen (O_APPEND), so a process that crashes or
// leaves through os._exit still reports what it launched.
//
// Why an injection library rather than torch.profiler: it covers every CUDA
// process (a wheel that loads its kernels through ctypes, or a test suite
// that never imports torch), needs no change to the code under test, and
// reads the kernel names the driver itself launches. The callback API is used
// (not the activity API) because CUpti_CallbackData's layout has been stable
// since CUDA 4, so one build works with the libcupti of CUDA 12 and 13.
// libcupti is loaded with dlopen: archbuild itself never links CUDA.
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <unordered_set>
#include <vector>

#include <cupti.h>

namespace {

struct Recorder {
  int fd = -1;
  std::mutex mutex;
  std::unordered_set<std::string> seen;  // "device\tname"
  decltype(&cuptiGetDeviceId) get_device_id = nullptr;
};

Recorder& recorder() {
  static Recorder* instance = new Recorder();  // never destroyed: callbacks may come during exit
  return *instance;
}

void write_line(int fd, const std::string& line) {
  const char* data = line.data();
  size_t left = line.size();
  while (left > 0) {
    ssize_t written = ::write(fd, data, left);
    if (written < 0 && errno == EINTR) continue;
    if (written < 0) return;  // nothing sensible to do inside the driver's callback
    data += written;
    left -= static_cast<size_t>(written);
  }
}

// Called at the exit of every launch API: a kernel counts once its launch
// succeeded (a launch the driver refused, say for want of SASS, ran nothing).
void CUPTIAPI on_launch(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void* data) {
  const auto* call = static_cast<const CUpti_CallbackData*>(data);
  if (call == nullptr || call->callbackSite != CUPTI_API_EXIT || call->symbolName == nullptr) return;
  // CUresult (driver) and cudaError_t (runtime) both read 0 for success.
  if (call->functionReturnValue == nullptr || *static_cast<const int*>(call->functionReturnValue) != 0) return;
  try {
    auto& state = recorder();
    uint32_t device = 0;
    if (state.get_device_id == nullptr || call->context == nullptr ||
        state.get_device_id(call->context, &device) != CUPTI_SUCCESS)
      device = 0;
    std::string key = std::to_string(device) + "\t" + call->symbolName;
    std::lock_guard lock(state.mutex);
    if (!state.seen.insert(key).second) return;
    write_line(state.fd, key + "\n");
  } catch (...) {
    // never let an exception (memory) out into the program under test
  }
}

// A child forked while another thread held the mutex would wait forever at
// its first launch: it starts with a fresh one (its own lines still go to
// the same file, which is what it inherited).
void reset_after_fork() { new (&recorder().mutex) std::mutex(); }

// The libcupti to use: ARCHBUILD_CUPTI_LIBRARY (archbuild finds one beside
// the interpreter's torch or the toolkit), one already loaded, then the
// loader's search path.
void* open_cupti(std::string& path, std::string& tried) {
  if (const char* named = std::getenv("ARCHBUILD_CUPTI_LIBRARY"); named && *named) {
    if (void* handle = dlopen(named, RTLD_NOW | RTLD_GLOBAL)) {
      path = named;
      return handle;
    }
    tried += std::string(named) + ": " + dlerror() + "; ";
  }
  for (int flags : {RTLD_NOW | RTLD_NOLOAD, RTLD_NOW | RTLD_GLOBAL})
    for (const char* name : {"libcupti.so.13", "libcupti.so.12", "libcupti.so"})
      if (void* handle = dlopen(name, flags)) {
        path = name;
        return handle;
      }
  tried += "libcupti.so.13, libcupti.so.12 and libcupti.so not found by the loader";
  return nullptr;
}

template <typename Function>
Function symbol(void* handle, const char* name) {
  return reinterpret_cast<Function>(dlsym(handle, name));
}

bool start(std::string& why_not, std::string& library) {
  void* cupti = open_cupti(library, why_not);
  if (cupti == nullptr) return false;
  auto subscribe_v2 = symbol<decltype(&cuptiSubscribe_v2)>(cupti, "cuptiSubscribe_v2");
  auto subscribe = symbol<decltype(&cuptiSubscribe)>(cupti, "cuptiSubscribe");
  auto enable = symbol<decltype(&cuptiEnableCallback)>(cupti, "cuptiEnableCallback");
  recorder().get_device_id = symbol<decltype(&cuptiGetDeviceId)>(cupti, "cuptiGetDeviceId");
  if ((subscribe_v2 == nullptr && subscribe == nullptr) || enable == nullptr) {
    why_not = library + " lacks cuptiSubscribe or cuptiEnableCallback";
    return false;
  }
  CUpti_SubscriberHandle subscriber = nullptr;
  CUptiResult result;
  char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
  if (subscribe_v2 != nullptr) {
    // The v2 call names the tool that already holds CUPTI, if one does.
    CUpti_SubscriberParams params{};
    params.structSize = sizeof(params);
    params.subscriberName = "archbuild launch recorder";
    params.oldSubscriberName = holder;
    params.oldSubscriberSize = CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN;
    result = subscribe_v2(&subscriber, on_launch, nullptr, &params);
  } else {
    result = subscribe(&subscriber, on_launch, nullptr);
  }
  if (result != CUPTI_SUCCESS) {
    why_not = library + ": cuptiSubscribe failed with CUPTI error " + std::to_string(result);
    if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
      why_not += std::string(" (another CUDA profiler holds CUPTI") + (*holder ? ": " + std::string(holder) : "") + ")";
    return false;
  }
  // Every launch entry point; an id an older CUPTI does not know is refused, which is fine.
  const CUpti_CallbackId driver[] = {
      CUPTI_DRIVER_TRACE_CBID_cuLaunch,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernelMultiDevice,
  };
  const CUpti_CallbackId runtime[] = {
      CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_v3020,
      CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_ptsz_v7000,
      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernelMultiDevice_v9000,
  };
  unsigned enabled = 0;
  for (auto id : driver) enabled += enable(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id) == CUPTI_SUCCESS;
  for (auto id : runtime) enabled += enable(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, id) == CUPTI_SUCCESS;
  if (enabled == 0) {
    why_not = library + " enabled none of the launch callbacks";
    return false;
  }
  return true;
}

}  // namespace

// Called by the CUDA driver during cuInit when CUDA_INJECTION64_PATH names
// this library. Returns 1 whatever happens: a recorder that cannot record must
// never stop the program under test.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  const char* dir = std::getenv("ARCHBUILD_LAUNCH_DIR");
  if (dir == nullptr || *dir == '\0') return 1;
  std::string file = std::string(dir) + "/launches-" + std::to_string(getpid()) + ".tsv";
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return 1;
  recorder().fd = fd;
  pthread_atfork(nullptr, nullptr, reset_after_fork);
  std::string why_not, library;
  if (start(why_not, library))
    write_line(fd, "# archbuild launch recorder 1: cupti " + library + "\n");
  else
    write_line(fd, "# unavailable: " + why_not + "\n");
  return 1;
}
