#include "cache/cache_listing.h"

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cache/cache_test_support.h"
#include "cache/provenance.h"
#include "cache/wheel_store.h"
#include "core/sha256.h"
#include "test_support.h"

using namespace archbuild;

TEST(CacheListing, EachWheelIsARowWithItsEntrysKeyAndSize) {
  TempDir dir("archbuild-cache-listing");
  WheelStore store(dir.path / "cache");
  publish_with_provenance(dir, store, "v1.0");
  publish_with_provenance(dir, store, "v1.10");
  const auto entries = store.entries();
  ASSERT_EQ(entries.size(), 2u);
  const auto rows = listing_rows(entries);
  ASSERT_EQ(rows.size(), 2u);  // one wheel each (the variant wheel is no row)
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].key, entries[i].hash.substr(0, 12));
    EXPECT_EQ(rows[i].wheel, "demo-1.0-py3-none-any.whl");
    EXPECT_EQ(rows[i].bytes, std::string("wheel " + entries[i].inputs.ref()).size());
    EXPECT_EQ(rows[i].validation, "static");  // no level recorded and no device result: static
    EXPECT_EQ(rows[i].published, "?");        // nor a publish time
  }
  const auto json = listing_json(dir.path / "cache", entries);
  EXPECT_EQ(json["cache_dir"], (dir.path / "cache").string());
  ASSERT_EQ(json["entries"].size(), 2u);
  EXPECT_EQ(json["entries"][0]["key"], entries[0].hash);
  EXPECT_EQ(json["entries"][1]["key"], entries[1].hash);
  EXPECT_TRUE(listing_rows({}).empty());
}

TEST(CacheListing, AKeyPrefixFindsOneEntryOrSaysWhyNot) {
  TempDir dir("archbuild-cache-listing");
  WheelStore store(dir.path / "cache");
  // Two refs whose keys share their first 4 characters: a prefix of 4 matches both.
  std::map<std::string, std::string> ref_by_prefix;
  std::string first, second;
  for (int n = 0; second.empty(); ++n) {
    const auto ref = "r" + std::to_string(n);
    const auto prefix = sha256_hex("cache_format 1\nref " + ref + "\n").substr(0, 4);
    if (auto it = ref_by_prefix.find(prefix); it != ref_by_prefix.end()) {
      first = it->second;
      second = ref;
    }
    ref_by_prefix[prefix] = ref;
  }
  const auto a = publish_with_provenance(dir, store, first);
  const auto b = publish_with_provenance(dir, store, second);
  ASSERT_EQ(a.hash.substr(0, 4), b.hash.substr(0, 4));

  EXPECT_EQ(entry_by_key_prefix(store, a.hash.substr(0, 12)).hash, a.hash);
  EXPECT_EQ(entry_by_key_prefix(store, b.hash).hash, b.hash);
  EXPECT_EQ(error_of([&] { entry_by_key_prefix(store, a.hash.substr(0, 4)); }),
            "'" + a.hash.substr(0, 4) + "' is ambiguous: 2 keys start with it");
  EXPECT_EQ(error_of([&] { entry_by_key_prefix(store, a.hash.substr(0, 3)); }),
            "give at least 4 characters of the key (see `archbuild cache ls`)");
  EXPECT_EQ(error_of([] { check_key_prefix("abc"); }),
            "give at least 4 characters of the key (see `archbuild cache ls`)");
  check_key_prefix("abcd");  // enough: no error
  // No key holds a z: no hex digit.
  EXPECT_EQ(error_of([&] { entry_by_key_prefix(store, "zzzz"); }),
            "no published build's key starts with 'zzzz' (see `archbuild cache ls`)");
}

TEST(CacheListing, AShownEntryHasItsInputsManifestBuildAndSbom) {
  TempDir dir("archbuild-cache-listing");
  WheelStore store(dir.path / "cache");
  auto entry = publish_with_provenance(dir, store, "v3.0");
  const auto json = shown_entry_json(entry);
  EXPECT_EQ(json["key"], entry.hash);
  EXPECT_EQ(json["key_inputs"]["ref"], "v3.0");
  EXPECT_EQ(json["manifest"], entry.manifest_json);
  EXPECT_FALSE(json["manifest"].is_null());

  EXPECT_FALSE(entry_sbom(entry));
  write(entry.dir / kSbomFile, "{}");
  ASSERT_TRUE(entry_sbom(entry));
  EXPECT_EQ(*entry_sbom(entry), entry.dir / kSbomFile);

  BuildReport manifest;
  EXPECT_FALSE(build_summary(manifest));  // a cache hit's manifest: no build record
  manifest.build = {{"seconds", 754.25},
                    {"oom_retries", 1},
                    {"attempts", nlohmann::json::array({{{"jobs", 12}}, {{"jobs", 6}}})}};
  auto build = build_summary(manifest);
  ASSERT_TRUE(build);
  EXPECT_DOUBLE_EQ(build->seconds, 754.25);
  EXPECT_DOUBLE_EQ(build->jobs, 12);  // the first attempt's
  EXPECT_DOUBLE_EQ(build->oom_retries, 1);
  // An edited manifest: fields of the wrong type count 0, no attempts at all too.
  manifest.build = {{"seconds", "long"}, {"attempts", nlohmann::json::array()}};
  build = build_summary(manifest);
  ASSERT_TRUE(build);
  EXPECT_DOUBLE_EQ(build->seconds, 0);
  EXPECT_DOUBLE_EQ(build->jobs, 0);
}
