#include "cache/cache_push.h"

#include <stdlib.h>

#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/json_text.h"
#include "test_support.h"

using namespace archbuild;

namespace {

// A cache with one published entry, its manifest recording its wheel.
WheelStore source_cache(const std::filesystem::path& root) {
  const auto wheel = root / "build" / "demo-1.0-py3-none-any.whl";
  write(wheel, "wheel");
  BuildReport manifest;
  manifest.wheels = {ReportedWheel::of(wheel)};
  manifest.local_version_label = "cu130.sm90";  // a report lists its wheels once they are labelled
  WheelStore store(root / "cache");
  store.publish({"cache_format 1\n", "0123abcd"}, {wheel}, json_text(manifest.to_json()));
  return store;
}

ExitCode push_exit(const WheelStore& from, const std::filesystem::path& dest) {
  try {
    push_cache(from, dest);
  } catch (const UserError& e) {
    return e.code();
  }
  return ExitCode::success;
}

}  // namespace

TEST(CachePush, ClaimsANewDirAndPushesAgainIntoIt) {
  TempDir dir;
  auto from = source_cache(dir.path);
  auto result = push_cache(from, dir.path / "shared");
  EXPECT_EQ(result.pushed, std::vector<std::string>{"0123abcd"});
  EXPECT_TRUE(std::filesystem::is_regular_file(dir.path / "shared" / kSharedCacheMarker));
  result = push_cache(from, dir.path / "shared");
  EXPECT_EQ(result.present, std::vector<std::string>{"0123abcd"});
}

TEST(CachePush, RefusesADirHoldingOtherThingsUntouched) {
  TempDir dir;
  auto from = source_cache(dir.path);
  write(dir.path / "theirs" / "precious.txt", "keep");
  EXPECT_EQ(push_exit(from, dir.path / "theirs"), ExitCode::bad_input);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path / "theirs"), {}), 1);
}

TEST(CachePush, RefusesLinksInsideItsOwnDirBeforeCopying) {
  TempDir dir;
  auto from = source_cache(dir.path);
  auto dest = dir.path / "shared";
  push_cache(from, dest);
  std::filesystem::remove_all(dest / "store");
  std::filesystem::create_directories(dir.path / "elsewhere");
  std::filesystem::create_directory_symlink(dir.path / "elsewhere", dest / "store");
  EXPECT_EQ(push_exit(from, dest), ExitCode::bad_input);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path / "elsewhere"));
}

TEST(CachePush, ADestWheelUnlikeItsManifestIsCopiedAgain) {
  TempDir dir;
  auto from = source_cache(dir.path);
  auto dest = dir.path / "shared";
  push_cache(from, dest);
  write(dest / "store" / "0123abcd" / "wheels" / "demo-1.0-py3-none-any.whl", "garbage");
  auto result = push_cache(from, dest);
  EXPECT_EQ(result.present, std::vector<std::string>{});
  EXPECT_EQ(result.repaired, std::vector<std::string>{"0123abcd"});
  ASSERT_EQ(result.repairs.size(), 1u);
  EXPECT_NE(result.repairs[0].find("demo-1.0-py3-none-any.whl: sha256 differs"), std::string::npos);
  EXPECT_EQ(read(dest / "store" / "0123abcd" / "wheels" / "demo-1.0-py3-none-any.whl"), "wheel");
  EXPECT_EQ(read(dest / "wheels" / "demo-1.0-py3-none-any.whl"), "wheel");
  EXPECT_EQ(push_cache(from, dest).present, std::vector<std::string>{"0123abcd"});
}

TEST(CachePush, ASourceWheelUnlikeItsManifestIsNotPushed) {
  TempDir dir;
  auto from = source_cache(dir.path);
  write(from.root() / "0123abcd" / "wheels" / "demo-1.0-py3-none-any.whl", "rotten");
  auto result = push_cache(from, dir.path / "shared");
  EXPECT_EQ(result.pushed, std::vector<std::string>{});
  ASSERT_EQ(result.not_pushed.size(), 1u);
  EXPECT_NE(result.not_pushed[0].find("0123abcd: demo-1.0-py3-none-any.whl: sha256 differs"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir.path / "shared" / "store" / "0123abcd"));
  EXPECT_TRUE(std::filesystem::is_directory(dir.path / "shared" / "simple"));  // the index is written all the same
}
