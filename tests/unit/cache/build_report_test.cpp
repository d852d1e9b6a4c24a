#include "cache/build_report.h"

#include <gtest/gtest.h>

using namespace archbuild;

TEST(BuildReport, RoundTripsThroughJson) {
  BuildReport report;
  report.key = "ab12";
  report.plan = {{"package", "demo"}};
  report.build = {{"ok", true}};
  report.validated = true;
  report.validation_level = ValidationLevel::device;
  report.validation_scope = "static + device";
  report.wheels = {{"demo-1.0+cu130.sm90-py3-none-any.whl", "/c/store/ab12/wheels/demo.whl", "ff00", 1234}};
  report.local_version_label = "cu130.sm90";
  report.published_at = "2026-12-01T08:00:00Z";
  report.store = "/c/store/ab12";
  report.install = {"pip install demo"};
  report.published = true;
  auto json = report.to_json();
  EXPECT_EQ(json["validation_level"], "device");
  EXPECT_FALSE(json.contains("quarantine"));
  auto back = BuildReport::from_json(json);
  EXPECT_EQ(back.to_json(), json);
  EXPECT_EQ(back.validation_level, ValidationLevel::device);
  ASSERT_EQ(back.wheels.size(), 1u);
  EXPECT_EQ(back.wheels[0].size, 1234u);
  EXPECT_EQ(back.store->string(), "/c/store/ab12");
}

TEST(BuildReport, ReadsWhatItCanOfAForeignManifest) {
  auto report = BuildReport::from_json(
      {{"key", 7}, {"wheels", "not a list"}, {"validation_level", "bogus"}, {"published_at", "2026-01-01T00:00:00Z"}});
  EXPECT_EQ(report.key, "");  // wrong type: the default
  EXPECT_TRUE(report.wheels.empty());
  // no level recorded (an older manifest): derived from the per-wheel results, here none ran on a device
  EXPECT_EQ(report.validation_level, ValidationLevel::static_only);
  auto older = BuildReport::from_json({{"validated", true}, {"validation", {{{"device", {{"ran", true}}}}}}});
  EXPECT_EQ(older.validation_level, ValidationLevel::device);
  EXPECT_EQ(BuildReport::from_json({{"validated", false}}).validation_level, ValidationLevel::none);
  EXPECT_EQ(report.published_at, "2026-01-01T00:00:00Z");
  EXPECT_EQ(parse_validation_level("static"), ValidationLevel::static_only);
  EXPECT_FALSE(parse_validation_level("static + device").has_value());
}

TEST(BuildReport, TheProvenLevelIsHowFarTheDeviceChecksGot) {
  EXPECT_EQ(proven_level(false, false), ValidationLevel::static_only);
  EXPECT_EQ(proven_level(false, true), ValidationLevel::static_only);  // no device check: nothing launched there
  EXPECT_EQ(proven_level(true, false), ValidationLevel::loaded);
  EXPECT_EQ(proven_level(true, true), ValidationLevel::device);
}
