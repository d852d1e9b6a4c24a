#include "cache/cache_push.h"

#include <stdlib.h>

#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "core/error.h"
#include "test_support.h"

using namespace archbuild;

namespace {

// A cache with one published entry.
WheelStore source_cache(const std::filesystem::path& root) {
  write(root / "build" / "demo-1.0-py3-none-any.whl", "wheel");
  WheelStore store(root / "cache");
  store.publish({"cache_format 1\n", "0123abcd"}, {root / "build" / "demo-1.0-py3-none-any.whl"}, "{}");
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
