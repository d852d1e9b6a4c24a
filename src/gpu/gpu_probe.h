#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "arch/compute_capability.h"
#include "arch/cuda_version.h"

namespace archbuild {

struct GpuDevice {
  int index = 0;
  std::string name;
  ComputeCapability cc;
  uint64_t memory_bytes = 0;
};

struct GpuReport {
  std::optional<CudaVersion> driver_cuda;  // newest CUDA the driver supports
  std::string driver_version;              // "580.159.04", when readable
  std::vector<GpuDevice> devices;
  std::string unavailable_reason;  // set when devices is empty

  std::vector<ComputeCapability> distinct_ccs() const;
};

// The narrow interface to the GPU driver, so tests can hand in fake devices.
class GpuProbe {
 public:
  virtual ~GpuProbe() = default;
  virtual GpuReport probe() const = 0;
};

// Loads libcuda.so.1 with dlopen at run time: archbuild links no CUDA
// library, so it runs (and says why there is no GPU) on any machine.
class DriverGpuProbe : public GpuProbe {
 public:
  GpuReport probe() const override;
};

// Devices from a spec "NAME:CC:MiB[,NAME:CC:MiB...]" plus a driver CUDA
// version, e.g. "NVIDIA H200:9.0:143771". Used by tests (ARCHBUILD_FAKE_GPUS).
class FakeGpuProbe : public GpuProbe {
 public:
  explicit FakeGpuProbe(GpuReport report) : report_(std::move(report)) {}
  static FakeGpuProbe from_spec(const std::string& devices, const std::string& driver_cuda);
  GpuReport probe() const override { return report_; }

 private:
  GpuReport report_;
};

// The real probe, or a fake one when ARCHBUILD_FAKE_GPUS is set (a test hook,
// documented in docs/TESTING.md; the fake is announced on stderr).
std::unique_ptr<GpuProbe> make_gpu_probe();

}  // namespace archbuild
