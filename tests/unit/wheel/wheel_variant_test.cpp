#include "wheel/wheel_variant.h"

#include <gtest/gtest.h>

#include "arch/arch_spec.h"
#include "test_support.h"
#include "wheel/wheel_archive.h"

using namespace archbuild;

TEST(WheelVariant, PropertiesAndLabelAreVariantlibs) {
  auto features = nvidia_variant_features(arch_list_of({{{9, 0}, ArchVariant::plain, true, true},
                                                        {{8, 0}, ArchVariant::plain, true, false}}),
                                          {13, 0});
  ASSERT_TRUE(features);
  EXPECT_EQ(features->at("sm_arch"), (std::vector<std::string>{"80_real", "90_real", "90_virtual"}));
  EXPECT_EQ(features->at("cuda_version_lower_bound"), std::vector<std::string>{"13.0"});
  // variantlib get-variant-hash -p "nvidia :: cuda_version_lower_bound :: 13.0" -p "nvidia :: sm_arch :: 90_real"
  auto sm90 = nvidia_variant_features(arch_list_of({{{9, 0}, ArchVariant::plain, true, false}}), {13, 0});
  EXPECT_EQ(variant_label(*sm90), "4b5dcf7d");
  EXPECT_FALSE(nvidia_variant_features(arch_list_of({{{9, 0}, ArchVariant::arch_specific, true, false}}), {13, 0}));
  EXPECT_EQ(variant_file_name("fixture-1.0-py3-none-linux_x86_64.whl", "4b5dcf7d"),
            "fixture-1.0-py3-none-linux_x86_64-4b5dcf7d.whl");
  EXPECT_EQ(variants_index_file_name("fixture-1.0-py3-none-linux_x86_64-4b5dcf7d.whl"), "fixture-1.0-variants.json");
  auto document = variants_document({{"4b5dcf7d", *sm90}});
  EXPECT_EQ(document["variants"]["4b5dcf7d"]["nvidia"]["sm_arch"][0], "90_real");
  EXPECT_EQ(document["default-priorities"]["namespace"][0], "nvidia");
}

TEST(WheelVariant, NamesTellABuildTagFromAVariantLabel) {
  auto variant = WheelName::parse("torch-2.9.1-cp311-cp311-linux_x86_64-4b5dcf7d.whl");
  ASSERT_TRUE(variant);
  EXPECT_EQ(variant->python, "cp311");
  EXPECT_EQ(variant->platform, "linux_x86_64");
  EXPECT_EQ(variant->variant, "4b5dcf7d");
  EXPECT_TRUE(variant->build.empty());
  auto build = WheelName::parse("torch-2.9.1-1-cp311-cp311-linux_x86_64.whl");  // a build tag starts with a digit
  ASSERT_TRUE(build);
  EXPECT_EQ(build->build, "1");
  EXPECT_TRUE(build->variant.empty());
  auto both = WheelName::parse("torch-2.9.1-1-cp311-cp311-linux_x86_64-null.whl");
  ASSERT_TRUE(both);
  EXPECT_EQ(both->variant, "null");
  EXPECT_FALSE(WheelName::parse("torch-2.9.1-x1-cp311-cp311-linux_x86_64-null.whl"));
}
