#include "gpu/visible_devices.h"

#include <gtest/gtest.h>

using namespace archbuild;

TEST(VisibleDevices, OrdinalsThroughTheUsersOwnList) {
  EXPECT_EQ(visible_devices_for({0, 2}, ""), "0,2");
  // The user showed the driver physical GPUs 2, 5 and 7: ordinal 1 is GPU 5.
  EXPECT_EQ(visible_devices_for({1}, "2,5,7"), "5");
  EXPECT_EQ(visible_devices_for({0, 2}, " 2, 5 ,7"), "2,7");
  EXPECT_EQ(visible_devices_for({0}, "GPU-8a1b,GPU-77f0"), "GPU-8a1b");  // UUIDs pass through
}
