#include "cache/store_listing.h"

#include <gtest/gtest.h>

#include "cache/cache_test_support.h"

using namespace archbuild;

TEST(StoreListing, AnEntryIsListedWithItsLevelTimeAndKernels) {
  TempDir dir("archbuild-listing");
  WheelStore store(dir.path / "cache");
  auto entry = publish_with_provenance(dir, store, "v1.0");
  // a manifest of this published build, as the session writes it
  BuildReport manifest;
  manifest.published_at = "2026-12-01T08:05:09Z";
  manifest.validation_level = ValidationLevel::checked;
  manifest.validation = {ValidatedWheel::from_json(
      {{"device", {{"ran", true}, {"kernel_census", {{"summary", "launched 3 of 4"}, {"launched_count", 3}}}}}})};
  entry.manifest = manifest;
  EXPECT_EQ(validation_word(entry), "checked");
  EXPECT_EQ(short_publish_time(entry), "2026-12-01 08:05");
  const auto json = store_entry_json(entry);
  EXPECT_EQ(json["key"], entry.hash);
  EXPECT_EQ(json["ref"], "v1.0");
  EXPECT_EQ(json["wheels"], nlohmann::json::array({"demo-1.0-py3-none-any.whl"}));
  EXPECT_EQ(json["bytes"], std::string("wheel v1.0").size());
  EXPECT_EQ(json["validation"], "checked");
  EXPECT_EQ(json["kernels_launched"], 3);
  EXPECT_EQ(json["kernel_census"], "launched 3 of 4");
}

TEST(StoreListing, AnEntryWithoutAReadableManifestSaysSo) {
  TempDir dir("archbuild-listing");
  WheelStore store(dir.path / "cache");
  auto entry = publish_with_provenance(dir, store, "v2.0");
  entry.manifest.reset();
  EXPECT_EQ(validation_word(entry), "?");
  EXPECT_EQ(short_publish_time(entry), "?");
  const auto json = store_entry_json(entry);
  EXPECT_TRUE(json["kernels_launched"].is_null());
  EXPECT_EQ(json["kernel_census"], "");
}
