#include "cache/cache_command_results.h"

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cache/cache_test_support.h"
#include "cache/store_maintenance.h"
#include "cache/wheel_store.h"
#include "test_support.h"

using namespace archbuild;

TEST(CacheCommandResults, VerifyReportsEachEntrysProblemsAndFailsOnAny) {
  LocalVerifyResult result;
  result.entries = {{"aaaa", "a-1.0-py3-none-any.whl", {}}, {"bbbb", "", {"manifest.json: missing"}}};
  result.unfinished_publishes = {"/c/store/.tmp-x@h@1"};
  auto json = verify_result_json(result);
  EXPECT_EQ(json["ok"], false);
  EXPECT_EQ(json["entries"], 2);
  EXPECT_EQ(json["bad_entries"], 1);
  EXPECT_EQ(json["problems"]["aaaa"], nlohmann::json::array());
  EXPECT_EQ(json["problems"]["bbbb"], nlohmann::json::array({"manifest.json: missing"}));
  EXPECT_EQ(json["unfinished_publishes"], nlohmann::json::array({"/c/store/.tmp-x@h@1"}));
  EXPECT_EQ(verify_exit_code(result), ExitCode::work_failed);

  result.entries[1].problems.clear();
  EXPECT_EQ(verify_exit_code(result), ExitCode::success);  // an unfinished publish is a warning
  EXPECT_EQ(verify_result_json(result)["ok"], true);
  result.index_problems = {"simple/demo/index.html: names a wheel that is not there"};
  EXPECT_EQ(verify_exit_code(result), ExitCode::work_failed);
  EXPECT_EQ(verify_result_json(result)["index_problems"].size(), 1u);
}

TEST(CacheCommandResults, GcListsWhatWentWithTheBytesItsWheelsHad) {
  TempDir dir("archbuild-cache-results");
  WheelStore store(dir.path / "cache");
  const auto older = publish_with_provenance(dir, store, "old");
  const auto newer = publish_with_provenance(dir, store, "new");
  std::filesystem::last_write_time(older.dir / "manifest.json",
                                   std::filesystem::last_write_time(newer.dir / "manifest.json") -
                                       std::chrono::hours(1));
  auto result = collect_garbage(dir.path / "cache", 1, false);
  ASSERT_EQ(result.steps.size(), 1u);
  // One another gc took first: not listed as removed.
  GcStep skipped{newer, 99, false};
  result.steps.push_back(skipped);

  const auto json = gc_result_json(result, 1, false, {"/c/downloads/.tmp-sdist"});
  EXPECT_EQ(json["dry_run"], false);
  EXPECT_EQ(json["keep"], 1);
  ASSERT_EQ(json["removed"].size(), 1u);
  EXPECT_EQ(json["removed"][0]["key"], older.hash);
  EXPECT_EQ(json["removed"][0]["bytes"], std::string("wheel old").size());  // not 0: the wheels are gone now
  EXPECT_EQ(json["freed_bytes"], result.freed_bytes);
  EXPECT_EQ(json["stale_downloads_removed"], nlohmann::json::array({"/c/downloads/.tmp-sdist"}));
  EXPECT_EQ(json["unfinished_publishes_removed"], nlohmann::json::array());
  EXPECT_EQ(gc_removed_json(GcResult{}), nlohmann::json::array());
}

TEST(CacheCommandResults, KeyDifferencesSayWhatChangedAndFailWhenAny) {
  const auto same = diff_key_texts("cache_format 2\nref v1\n", "cache_format 2\nref v1\n");
  EXPECT_EQ(key_differences_json(same)["same"], true);
  EXPECT_EQ(key_differences_json(same)["differences"], nlohmann::json::array());
  EXPECT_EQ(key_differences_exit_code(same), ExitCode::success);

  const auto changed = diff_key_texts("cache_format 2\nref v1\n", "cache_format 2\nref v2\ncuda 13.0\n");
  const auto json = key_differences_json(changed);
  EXPECT_EQ(json["same"], false);
  ASSERT_EQ(json["differences"].size(), changed.size());
  for (size_t i = 0; i < changed.size(); ++i) {
    EXPECT_EQ(json["differences"][i]["key"], changed[i].key);
    EXPECT_EQ(json["differences"][i]["a"], changed[i].before);
    EXPECT_EQ(json["differences"][i]["b"], changed[i].after);
  }
  EXPECT_EQ(key_differences_exit_code(changed), ExitCode::work_failed);
}

TEST(CacheCommandResults, APushNamesItsDestinationAndIndex) {
  PushResult result;
  result.index.simple_dir = "/shared/simple";
  result.index.wheels.resize(3);
  const auto json = pushed_index_json(result, "/shared");
  EXPECT_EQ(json["dest"], "/shared");
  EXPECT_EQ(json["index"], "/shared/simple");
  EXPECT_EQ(json["wheels_in_index"], 3);
}
