#include "cache/build_report.h"

#include <gtest/gtest.h>

using namespace archbuild;

TEST(BuildReport, RoundTripsThroughJson) {
  BuildReport report;
  report.key = "ab12";
  report.plan = {{"package", "demo"}};
  report.build = {{"ok", true}};
  report.validated = true;
  report.validation_level = ValidationLevel::checked;
  report.validation_scope = "static + device";
  report.wheels = {{"demo-1.0+cu130.sm90-py3-none-any.whl", "/c/store/ab12/wheels/demo.whl", "ff00", 1234}};
  report.local_version_label = "cu130.sm90";
  report.published_at = "2026-12-01T08:00:00Z";
  report.store = "/c/store/ab12";
  report.install = {"pip install demo"};
  report.published = true;
  auto json = report.to_json();
  EXPECT_EQ(json["validation_level"], "checked");
  EXPECT_FALSE(json.contains("quarantine"));
  auto back = BuildReport::from_json(json);
  EXPECT_EQ(back.to_json(), json);
  EXPECT_EQ(back.validation_level, ValidationLevel::checked);
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
  EXPECT_EQ(older.validation_level, ValidationLevel::launched);
  // an older manifest's level name
  EXPECT_EQ(BuildReport::from_json({{"validation_level", "device"}}).validation_level, ValidationLevel::launched);
  EXPECT_EQ(BuildReport::from_json({{"validated", false}}).validation_level, ValidationLevel::none);
  EXPECT_EQ(report.published_at, "2026-01-01T00:00:00Z");
  EXPECT_EQ(parse_validation_level("static"), ValidationLevel::static_only);
  EXPECT_FALSE(parse_validation_level("static + device").has_value());
}

TEST(BuildReport, TheProvenLevelIsHowFarTheDeviceChecksGot) {
  EXPECT_EQ(proven_level(false, false), ValidationLevel::static_only);
  EXPECT_EQ(proven_level(false, true), ValidationLevel::static_only);  // no device check: nothing launched there
  EXPECT_EQ(proven_level(true, false), ValidationLevel::loaded);
  EXPECT_EQ(proven_level(true, true), ValidationLevel::launched);
  EXPECT_EQ(proven_level(true, true, true), ValidationLevel::checked);
  EXPECT_EQ(proven_level(true, false, true), ValidationLevel::loaded);  // nothing of its own ran: nothing compared
  for (auto level : {ValidationLevel::none, ValidationLevel::static_only, ValidationLevel::loaded,
                     ValidationLevel::launched, ValidationLevel::checked})
    EXPECT_EQ(parse_validation_level(to_string(level)), level);
}

TEST(BuildReport, KeepsEachWheelsValidationTypedAndWhole) {
  const nlohmann::json detail = {
      {"wheel", "/o/demo.whl"},
      {"ok", true},
      {"device",
       {{"ran", true},
        {"kernel_census",
         {{"summary", "launched 2 of 5"},
          {"launched_count", 2},
          {"launched", {{{"name", "_Z1fv"}, {"demangled", "f()"}}, {{"name", "_Z1gv"}, {"demangled", "g()"}}}}}}}}};
  BuildReport report;
  report.local_version_label = "cu130.sm90";
  report.validation = {ValidatedWheel::from_json(detail), ValidatedWheel::from_json({{"wheel", "/o/other.whl"}})};
  auto back = BuildReport::from_json(report.to_json());
  ASSERT_EQ(back.validation.size(), 2u);
  EXPECT_EQ(back.validation[0].wheel, "/o/demo.whl");
  EXPECT_TRUE(back.validation[0].device_ran);
  EXPECT_FALSE(back.validation[1].device_ran);
  EXPECT_EQ(back.validation[0].detail, detail);  // the whole result, for people
  ASSERT_EQ(back.kernel_censuses().size(), 1u);  // the other wheel took none
  EXPECT_EQ(back.kernel_censuses()[0].launched, (std::vector<std::string>{"f()", "g()"}));
  EXPECT_EQ(back.kernels_launched(), 2u);
  EXPECT_EQ(back.kernel_census_summary(), "launched 2 of 5");
  // a census field of another type is left at its default
  auto odd = ValidatedWheel::from_json({{"device", {{"ran", "yes"}, {"kernel_census", {{"launched_count", -1}}}}}});
  EXPECT_FALSE(odd.device_ran);
  ASSERT_TRUE(odd.census);
  EXPECT_EQ(odd.census->launched_count, 0u);
}
