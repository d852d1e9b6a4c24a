#include "gpu/gpu_probe.h"

#include <gtest/gtest.h>

#include "arch/compute_capability.h"
#include "core/error.h"

using namespace archbuild;

TEST(GpuProbe, FakeSpec) {
  auto probe = FakeGpuProbe::from_spec("NVIDIA H200:9.0:143771,RTX 5090:12.0:32607", "13.0");
  auto report = probe.probe();
  ASSERT_EQ(report.devices.size(), 2u);
  EXPECT_EQ(report.devices[1].cc, (ComputeCapability{12, 0}));
  EXPECT_EQ(report.distinct_ccs().size(), 2u);
  EXPECT_THROW(FakeGpuProbe::from_spec("H200:9:1", "13.0"), UserError);
}

TEST(GpuProbe, RealProbeNeverThrowsAndExplainsAbsence) {
  auto report = DriverGpuProbe().probe();
  if (report.devices.empty()) {
    EXPECT_FALSE(report.unavailable_reason.empty());
  }
}
