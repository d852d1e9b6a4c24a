#include "cache/cache_verify.h"

#include <gtest/gtest.h>

#include "cache/build_report.h"
#include "cache/wheel_store.h"
#include "core/json_text.h"
#include "core/sha256.h"
#include "test_support.h"
#include "wheel/wheel_test_support.h"

namespace archbuild {
namespace {

// A cache with one whole entry: a real wheel its manifest records, key.txt naming it.
StoreEntry publish_one(const std::filesystem::path& root) {
  std::filesystem::create_directories(root / "build");
  const auto wheel = write_minimal_wheel(root / "build", "demo", "py3-none-any");
  BuildReport manifest;
  manifest.wheels = {ReportedWheel::of(wheel)};
  manifest.local_version_label = "cu130.sm90";
  const std::string key = "cache_format 2\n";
  return WheelStore(root / "cache").publish({key, sha256_hex(key)}, {wheel}, json_text(manifest.to_json()));
}

TEST(CacheVerify, EachEntryIsHeardAsCheckedAndAChangedWheelMakesItBad) {
  TempDir dir;
  const auto cache = dir.path / "cache";
  const auto entry = publish_one(dir.path);
  std::vector<std::string> heard;
  auto result = verify_local_cache(cache, {}, false, [&](const VerifiedEntry& e) { heard.push_back(e.hash); });
  ASSERT_EQ(result.entries.size(), 1u);
  EXPECT_EQ(heard, std::vector<std::string>{entry.hash});
  EXPECT_EQ(result.entries[0].first_wheel, "demo-1.0-py3-none-any.whl");
  EXPECT_TRUE(result.entries[0].problems.empty()) << ::testing::PrintToString(result.entries[0].problems);
  EXPECT_EQ(result.index_dir, cache / "simple");

  // an unsigned entry is a problem only when a signature is required
  EXPECT_EQ(verify_local_cache(cache, {}, true).bad_entries(), 1u);

  const auto original = read(entry.wheels.front());
  write(entry.wheels.front(), "changed");
  result = verify_local_cache(cache, {}, false);
  EXPECT_EQ(result.bad_entries(), 1u);
  EXPECT_FALSE(result.ok());
  write(entry.wheels.front(), original);
  EXPECT_TRUE(verify_local_cache(cache, {}, false).entries[0].problems.empty());
}

TEST(CacheVerify, NoCacheIsBadInputNamingThePlace) {
  TempDir dir;
  const auto why = error_of([&] { verify_local_cache(dir.path / "none", {}, false); });
  EXPECT_NE(why.find("no cache at " + (dir.path / "none").string()), std::string::npos) << why;
}

}  // namespace
}  // namespace archbuild
