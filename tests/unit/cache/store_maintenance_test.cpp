#include "cache/store_maintenance.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "cache/cache_test_support.h"
#include "cache/provenance.h"
#include "cache/wheel_store.h"
#include "core/ed25519.h"
#include "core/json_text.h"
#include "core/sha256.h"
#include "test_support.h"

using namespace archbuild;

TEST(StoreGc, KeepsTheNewestPerProjectAndArchList) {
  auto entry = [](const std::string& hash, const std::string& wheel, const std::string& arch_list,
                  const std::string& machine = "") {
    StoreEntry e;
    e.hash = hash;
    e.wheels = {"/c/store/" + hash + "/wheels/" + wheel};
    e.inputs = KeyInputs({{"arch_list", arch_list}});
    if (!machine.empty()) e.inputs = KeyInputs({{"arch_list", arch_list}, {"host_machine", machine}});
    return e;
  };
  // newest first, as WheelStore::entries() returns them
  std::vector<StoreEntry> entries = {entry("a", "torch-2.9.1+cu130.sm90-cp311-cp311-linux_x86_64.whl", "9.0"),
                                     entry("b", "torch-2.9.1+cu130.sm80-cp311-cp311-linux_x86_64.whl", "8.0"),
                                     entry("c", "torch-2.9.0+cu130.sm90-cp311-cp311-linux_x86_64.whl", "9.0"),
                                     entry("d", "Torch-2.8.0+cu130.sm90-cp311-cp311-linux_x86_64.whl", "9.0"),
                                     entry("e", "fixture-1.0+cu130.sm90-py3-none-linux_x86_64.whl", "9.0")};
  EXPECT_EQ(gc_group(entries[0]), "torch 9.0 x86_64");
  auto doomed = entries_to_collect(entries, 2);
  ASSERT_EQ(doomed.size(), 1u);
  EXPECT_EQ(doomed[0].hash, "d");
  doomed = entries_to_collect(entries, 1);
  ASSERT_EQ(doomed.size(), 2u);
  EXPECT_EQ(doomed[0].hash, "c");
  EXPECT_EQ(doomed[1].hash, "d");
  // A shared cache's aarch64 build never makes its x86-64 twin look old.
  std::vector<StoreEntry> both = {entry("arm", "torch-2.9.1+cu130.sm90-cp311-cp311-linux_aarch64.whl", "9.0",
                                        "aarch64"),
                                  entry("x86", "torch-2.9.1+cu130.sm90-cp311-cp311-linux_x86_64.whl", "9.0")};
  EXPECT_EQ(gc_group(both[0]), "torch 9.0 aarch64");
  EXPECT_TRUE(entries_to_collect(both, 1).empty());
}

TEST(IndexPage, LinksAreScannedWithoutRecursion) {
  auto links = index_page_links(
      "<a href=\"../../wheels/demo-1.0-py3-none-any.whl#sha256=" + std::string(64, 'a') +
      "\">demo</a><br>\n<a href=\"demo/\">no digest</a><a href=\"x.whl#md5=00\">other hash</a>");
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(links[0].href, "../../wheels/demo-1.0-py3-none-any.whl");
  EXPECT_EQ(links[0].sha256, std::string(64, 'a'));
  // A libstdc++ std::regex overflowed the stack on an href this long.
  auto huge = index_page_links("<a href=\"" + std::string(4'000'000, 'a') + "#sha256=" + std::string(64, '0') + "\">");
  ASSERT_EQ(huge.size(), 1u);
  EXPECT_EQ(huge[0].href.size(), 4'000'000u);
  std::string noise(1 << 20, '\0');
  uint32_t state = 7;
  for (auto& c : noise) c = static_cast<char>((state = state * 1103515245 + 12345) >> 24);
  index_page_links(noise);  // arbitrary bytes: no crash, whatever it finds
  EXPECT_TRUE(index_page_links("href=\"unterminated#sha256=").empty());
}

TEST(StoreProvenance, TheEntryAsPublishedMatchesAndAChangedFileIsNamed) {
  TempDir dir;
  WheelStore store(dir.path / "cache");
  auto entry = publish_with_provenance(dir, store, "a");
  ASSERT_EQ(entry.variants.size(), 1u);
  EXPECT_EQ(entry_provenance_problems(entry, {}, false), std::vector<std::string>{});
  // Unsigned: a problem only when a signature is required.
  EXPECT_EQ(entry_provenance_problems(entry, {}, true), std::vector<std::string>{"provenance.intoto.json: not signed"});

  write(entry.variants[0], "changed");
  EXPECT_EQ(entry_provenance_problems(entry, {}, false),
            std::vector<std::string>{"provenance.intoto.json: demo-1.0-py3-none-any-0123abcd.whl's sha256 differs "
                                     "from the statement's (changed after publishing)"});
  write(entry.dir / "manifest.json", "{}");
  auto problems = entry_provenance_problems(*store.find(key_of("cache_format 1\nref a\n")), {}, false);
  EXPECT_NE(std::find(problems.begin(), problems.end(),
                      "provenance.intoto.json: manifest.json's sha256 differs from the statement's (changed after "
                      "publishing)"),
            problems.end());
}

TEST(StoreProvenance, EveryFileOfTheEntryIsVouchedForAndEverySubjectIsThere) {
  TempDir dir;
  WheelStore store(dir.path / "cache");
  write(dir.path / "demo-1.0-py3-none-any.whl", "wheel");
  write(dir.path / "demo-1.0-py3-none-any-0123abcd.whl", "variant");
  write(dir.path / "demo-1.0-py3-none-any-0123abcd.whl.json", R"({"variants": {"0123abcd": {}}})");
  auto [manifest, inputs] = manifest_and_inputs(dir);
  const std::string sbom = "{\"bomFormat\": \"CycloneDX\"}\n";
  inputs.other_subjects = {{"demo-1.0-py3-none-any-0123abcd.whl.json",
                            sha256_hex(std::string(R"({"variants": {"0123abcd": {}}})"))},
                           {kSbomFile, sha256_hex(sbom)}};
  const auto envelope = json_text(dsse_envelope(json_text(provenance_statement(inputs)), nullptr));
  const CacheKey key{"cache_format 2\nref v\n", sha256_hex(std::string("cache_format 2\nref v\n"))};
  auto entry = store.publish(key, {dir.path / "demo-1.0-py3-none-any.whl"}, manifest,
                             {{kProvenanceFile, envelope}, {kSbomFile, sbom}},
                             {dir.path / "demo-1.0-py3-none-any-0123abcd.whl"});
  auto problems_now = [&] {
    auto now = *store.find(key);
    auto found = verify_store_entry(now);
    for (auto& problem : entry_provenance_problems(now, {}, false)) found.push_back(problem);
    return found;
  };
  auto has = [](const std::vector<std::string>& found, const std::string& text) {
    return std::any_of(found.begin(), found.end(), [&](const auto& p) { return p.find(text) != std::string::npos; });
  };
  ASSERT_EQ(entry_provenance_problems(entry, {}, false), std::vector<std::string>{});
  // The SBOM and the variant.json behind the index's variants document are subjects.
  write(entry.dir / kSbomFile, "{}");
  EXPECT_TRUE(has(problems_now(), "sbom.cdx.json's sha256 differs from the statement's"));
  write(entry.dir / kSbomFile, sbom);
  const auto sidecar = entry.dir / "variants" / "demo-1.0-py3-none-any-0123abcd.whl.json";
  write(sidecar, R"({"variants": {"0123abcd": {"nvidia": {"sm_arch": ["120_real"]}}}})");
  EXPECT_TRUE(has(problems_now(), "demo-1.0-py3-none-any-0123abcd.whl.json's sha256 differs"));
  write(sidecar, R"({"variants": {"0123abcd": {}}})");
  // A variant wheel replaced by a link to a file outside the cache: named, and never listed as a variant.
  const auto variant = entry.dir / "variants" / "demo-1.0-py3-none-any-0123abcd.whl";
  write(dir.path / "outside.whl", "variant");
  std::filesystem::remove(variant);
  std::filesystem::create_symlink(dir.path / "outside.whl", variant);
  EXPECT_TRUE(store.find(key)->variants.empty());
  auto found = problems_now();
  EXPECT_TRUE(has(found, "variants/demo-1.0-py3-none-any-0123abcd.whl is not a file archbuild wrote"));
  EXPECT_TRUE(has(found, "its subject demo-1.0-py3-none-any-0123abcd.whl is missing from the entry"));
  // Deleted: missing as well.
  std::filesystem::remove(variant);
  EXPECT_TRUE(has(problems_now(), "its subject demo-1.0-py3-none-any-0123abcd.whl is missing from the entry"));
  // The statement removed: with a trusted key nothing can be checked, so it is a problem.
  std::filesystem::remove(entry.dir / kProvenanceFile);
  const auto key_pair = dir.path / "site.key";
  Ed25519Key::generate(key_pair);
  auto trusted = Ed25519Key::parse_public(read(dir.path / "site.key.pub"), "site.key.pub");
  EXPECT_EQ(entry_provenance_problems(*store.find(key), {trusted}, false),
            std::vector<std::string>{
                "provenance.intoto.json: missing, so nothing of the entry can be checked against a trusted key"});
}

TEST(StoreGc, CollectRemovesOldEntriesAndLeftoversAndADryRunNothing) {
  TempDir dir;
  WheelStore store(dir.path / "cache");
  const auto older = publish_with_provenance(dir, store, "old");
  const auto newer = publish_with_provenance(dir, store, "new");
  std::filesystem::last_write_time(older.dir / "manifest.json",
                                   std::filesystem::last_write_time(newer.dir / "manifest.json") -
                                       std::chrono::hours(1));
  // A temporary dir under no name a live publish has: a leftover.
  const auto leftover = store.root() / ".tmp-stray";
  std::filesystem::create_directories(leftover);

  std::vector<std::string> seen;
  auto dry = collect_garbage(dir.path / "cache", 1, true, [&](const GcStep& step) { seen.push_back(step.entry.hash); });
  ASSERT_EQ(dry.steps.size(), 1u);
  EXPECT_EQ(dry.steps[0].entry.hash, older.hash);
  EXPECT_TRUE(dry.steps[0].removed);
  EXPECT_EQ(dry.steps[0].bytes, entry_wheel_bytes(older));
  EXPECT_EQ(dry.freed_bytes, std::string("wheel old").size());
  EXPECT_EQ(dry.leftovers, std::vector<std::filesystem::path>{leftover});
  EXPECT_EQ(seen, std::vector<std::string>{older.hash});
  EXPECT_TRUE(std::filesystem::exists(older.dir));
  EXPECT_TRUE(std::filesystem::exists(leftover));

  auto done = collect_garbage(dir.path / "cache", 1, false);
  ASSERT_EQ(done.steps.size(), 1u);
  EXPECT_TRUE(done.steps[0].removed);
  EXPECT_EQ(done.freed_bytes, dry.freed_bytes);
  EXPECT_FALSE(std::filesystem::exists(older.dir));
  EXPECT_FALSE(std::filesystem::exists(leftover));
  EXPECT_TRUE(store.find(key_of("cache_format 1\nref new\n")));
  EXPECT_EQ(entry_wheel_bytes(done.steps[0].entry), 0u);  // its wheels are gone: 0, not -1 per wheel
  EXPECT_TRUE(collect_garbage(dir.path / "cache", 1, false).steps.empty());
}
