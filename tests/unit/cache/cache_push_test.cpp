#include "cache/cache_push.h"

#include <stdlib.h>

#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/json_text.h"
#include "core/sha256.h"
#include "test_support.h"
#include "wheel/wheel_test_support.h"

using namespace archbuild;

namespace {

// A real key: push checks what verify checks, key.txt hashing to the entry's name included.
const std::string kKeyText = "cache_format 2\n";
const std::string kKeyHash = sha256_hex(kKeyText);

// A cache with one published entry, its manifest recording its wheel.
WheelStore source_cache(const std::filesystem::path& root) {
  std::filesystem::create_directories(root / "build");
  const auto wheel = write_minimal_wheel(root / "build", "demo", "py3-none-any");  // a real one: push reads RECORD
  BuildReport manifest;
  manifest.wheels = {ReportedWheel::of(wheel)};
  manifest.local_version_label = "cu130.sm90";  // a report lists its wheels once they are labelled
  WheelStore store(root / "cache");
  store.publish({kKeyText, kKeyHash}, {wheel}, json_text(manifest.to_json()));
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
  EXPECT_EQ(result.pushed, std::vector<std::string>{kKeyHash});
  EXPECT_TRUE(std::filesystem::is_regular_file(dir.path / "shared" / kSharedCacheMarker));
  result = push_cache(from, dir.path / "shared");
  EXPECT_EQ(result.present, std::vector<std::string>{kKeyHash});
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
  write(dest / "store" / kKeyHash / "wheels" / "demo-1.0-py3-none-any.whl", "garbage");
  auto result = push_cache(from, dest);
  EXPECT_EQ(result.present, std::vector<std::string>{});
  EXPECT_EQ(result.repaired, std::vector<std::string>{kKeyHash});
  ASSERT_EQ(result.repairs.size(), 1u);
  EXPECT_NE(result.repairs[0].find("demo-1.0-py3-none-any.whl: sha256 differs"), std::string::npos);
  const auto built = read(dir.path / "build" / "demo-1.0-py3-none-any.whl");
  EXPECT_EQ(read(dest / "store" / kKeyHash / "wheels" / "demo-1.0-py3-none-any.whl"), built);
  EXPECT_EQ(read(dest / "wheels" / "demo-1.0-py3-none-any.whl"), built);
  EXPECT_TRUE(WheelStore(dest).set_aside().empty());  // the damaged copy, gone after the refresh
  EXPECT_EQ(push_cache(from, dest).present, std::vector<std::string>{kKeyHash});
}

TEST(CachePush, ASourceWheelUnlikeItsManifestIsNotPushed) {
  TempDir dir;
  auto from = source_cache(dir.path);
  write(from.root() / kKeyHash / "wheels" / "demo-1.0-py3-none-any.whl", "rotten");
  auto result = push_cache(from, dir.path / "shared");
  EXPECT_EQ(result.pushed, std::vector<std::string>{});
  ASSERT_FALSE(result.not_pushed.empty());
  EXPECT_NE(result.not_pushed[0].find(kKeyHash + ": demo-1.0-py3-none-any.whl: sha256 differs"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir.path / "shared" / "store" / kKeyHash));
  EXPECT_TRUE(std::filesystem::is_directory(dir.path / "shared" / "simple"));  // the index is written all the same
}
