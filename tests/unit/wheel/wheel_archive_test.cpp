#include "wheel/wheel_archive.h"

#include <gtest/gtest.h>

using namespace archbuild;

TEST(Wheel, NameAndRecordDigest) {
  auto name = WheelName::parse("torch-2.9.1+cu130.sm90-cp311-cp311-manylinux_2_28_x86_64.whl");
  ASSERT_TRUE(name.has_value());
  EXPECT_EQ(name->name, "torch");
  EXPECT_EQ(name->version, "2.9.1+cu130.sm90");
  EXPECT_EQ(name->platform, "manylinux_2_28_x86_64");
  auto with_build = WheelName::parse("demo-1.0-1-py3-none-any.whl");
  ASSERT_TRUE(with_build.has_value());
  EXPECT_EQ(with_build->build, "1");
  EXPECT_FALSE(WheelName::parse("demo-1.0.tar.gz").has_value());
  EXPECT_FALSE(WheelName::parse("demo-py3-none-any.whl").has_value());
  // sha256("") in RECORD's urlsafe base64 without padding
  EXPECT_EQ(record_digest(""), "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU");
}
