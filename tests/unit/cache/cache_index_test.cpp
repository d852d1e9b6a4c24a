#include "cache/cache_index.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "cache/build_report.h"
#include "cache/simple_index.h"
#include "cache/store_maintenance.h"
#include "cache/wheel_store.h"
#include "core/error.h"
#include "core/json_text.h"
#include "core/sha256.h"
#include "test_support.h"

using namespace archbuild;

namespace {

// The exit code of a UserError `body` throws; success when none.
template <typename Body>
ExitCode exit_of(Body body) {
  try {
    body();
  } catch (const UserError& e) {
    return e.code();
  }
  return ExitCode::success;
}

// Two builds of demo 1.0, ROOT/old and ROOT/new, of other bytes: the wheel's name.
std::string write_two_builds(const std::filesystem::path& root) {
  const std::string name = "demo-1.0-py3-none-any.whl";
  write(root / "old" / name, "first build");
  write(root / "new" / name, "second build");
  return name;
}

// One entry of demo 1.0 (built under ROOT/build), published and listed.
StoreEntry publish_listed_demo(const std::filesystem::path& root, const WheelStore& store) {
  write(root / "build" / "demo-1.0-py3-none-any.whl", "wheel");
  auto entry = store.publish({"cache_format 1\n", "0123abcd"}, {root / "build" / "demo-1.0-py3-none-any.whl"}, "{}");
  refresh_cache_index(store.root().parent_path(), store);
  return entry;
}

}  // namespace

TEST(SimpleIndexOwnership, RefusesADirItDidNotWriteAndLeavesIt) {
  TempDir dir;
  write(dir.path / "wheels" / "demo-1.0-py3-none-any.whl", "wheel");
  write(dir.path / "site" / "index.html", "<html>home</html>");
  write(dir.path / "site" / "docs" / "index.html", "<html>docs</html>");
  EXPECT_EQ(exit_of([&] { write_simple_index(dir.path / "wheels", dir.path / "site"); }), ExitCode::bad_input);
  EXPECT_EQ(read(dir.path / "site" / "index.html"), "<html>home</html>");
  EXPECT_FALSE(std::filesystem::exists(dir.path / "site" / kIndexMarker));
  EXPECT_FALSE(std::filesystem::exists(dir.path / "site" / "demo"));
}

TEST(SimpleIndexOwnership, RemovesOnlyTheProjectPagesItRecorded) {
  TempDir dir;
  auto wheels = dir.path / "wheels", index = dir.path / "index";
  write(wheels / "alpha-1.0-py3-none-any.whl", "a");
  write(wheels / "beta-1.0-py3-none-any.whl", "b");
  ASSERT_EQ(write_simple_index(wheels, index).size(), 2u);
  EXPECT_EQ(read(index / kIndexMarker), "archbuild simple index 1\nproject alpha\nproject beta\n");
  EXPECT_EQ(linked_wheel_names(index),
            (std::set<std::string>{"alpha-1.0-py3-none-any.whl", "beta-1.0-py3-none-any.whl"}));
  write(index / "docs" / "index.html", "<html>docs</html>");  // someone's, added later
  std::filesystem::remove(wheels / "beta-1.0-py3-none-any.whl");
  ASSERT_EQ(write_simple_index(wheels, index).size(), 1u);
  EXPECT_FALSE(std::filesystem::exists(index / "beta"));
  EXPECT_EQ(read(index / "docs" / "index.html"), "<html>docs</html>");
  EXPECT_EQ(read(index / kIndexMarker), "archbuild simple index 1\nproject alpha\n");
}

TEST(SimpleIndexOwnership, RefusesLinksAndProjectDirsOfOthers) {
  TempDir dir;
  auto wheels = dir.path / "wheels", index = dir.path / "index";
  write(wheels / "alpha-1.0-py3-none-any.whl", "a");
  write_simple_index(wheels, index);
  write(dir.path / "elsewhere" / "keep.txt", "keep");
  std::filesystem::create_directory_symlink(dir.path / "elsewhere", index / "stale");
  EXPECT_EQ(exit_of([&] { check_index_dir(index); }), ExitCode::bad_input);
  std::filesystem::remove(index / "stale");
  write(index / "beta" / "index.html", "someone's");
  write(wheels / "beta-1.0-py3-none-any.whl", "b");
  EXPECT_EQ(exit_of([&] { write_simple_index(wheels, index); }), ExitCode::bad_input);
  EXPECT_EQ(read(index / "beta" / "index.html"), "someone's");
  EXPECT_EQ(read(dir.path / "elsewhere" / "keep.txt"), "keep");
}

TEST(CacheIndex, RefusesASymlinkedWheelsDirBeforeWritingAnything) {
  TempDir dir;
  auto cache = dir.path / "cache";
  write(dir.path / "elsewhere" / "precious.txt", "keep");
  std::filesystem::create_directories(cache);
  std::filesystem::create_directory_symlink(dir.path / "elsewhere", cache / "wheels");
  WheelStore store(cache);
  EXPECT_EQ(exit_of([&] { refresh_cache_index(cache, store); }), ExitCode::bad_input);
  EXPECT_EQ(read(dir.path / "elsewhere" / "precious.txt"), "keep");
  EXPECT_FALSE(std::filesystem::exists(cache / "simple"));
}

TEST(CacheIndex, UnlinksOnlyTheWheelLinksItMade) {
  TempDir dir;
  auto cache = dir.path / "cache";
  WheelStore store(cache);
  auto entry = publish_listed_demo(dir.path, store);
  ASSERT_TRUE(std::filesystem::exists(cache / "wheels" / "demo-1.0-py3-none-any.whl"));
  write(cache / "wheels" / "mine-2.0-py3-none-any.whl", "dropped in by hand");
  write(cache / "wheels" / "notes.txt", "mine");
  store.remove_if_unchanged(entry);
  auto index = refresh_cache_index(cache, store);
  EXPECT_TRUE(index.wheels.empty());
  EXPECT_FALSE(std::filesystem::exists(cache / "wheels" / "demo-1.0-py3-none-any.whl"));
  EXPECT_EQ(read(cache / "wheels" / "mine-2.0-py3-none-any.whl"), "dropped in by hand");
  EXPECT_EQ(read(cache / "wheels" / "notes.txt"), "mine");
}

// Two keys of one version share a wheel name, and the newer takes its link.
// A refresh stopped between the new link and the pages (here: the link
// cannot be made) leaves the wheel unlisted, never a listed sha256 that the
// linked file no longer has.
TEST(CacheIndex, ANameTakenOverIsUnlistedBeforeItsLinkChanges) {
  TempDir dir;
  auto cache = dir.path / "cache";
  const auto name = write_two_builds(dir.path);
  WheelStore store(cache);
  store.publish({"cache_format 1\nref v1.0\n", "ffff0000"}, {dir.path / "old" / name}, "{}");
  refresh_cache_index(cache, store);
  store.publish({"cache_format 1\nref v1.1\n", "0000ffff"}, {dir.path / "new" / name}, "{}");
  auto blocker = cache / "wheels" / (".tmp-" + std::to_string(getpid()) + "-" + name);
  write(blocker / "in-the-way", "x");
  EXPECT_ANY_THROW(refresh_cache_index(cache, store));
  auto problems = verify_cache_index(cache, store);
  ASSERT_FALSE(problems.empty());
  for (const auto& problem : problems)
    EXPECT_NE(problem.find("published but not in the index"), std::string::npos) << problem;
  std::filesystem::remove_all(blocker);
  refresh_cache_index(cache, store);
  EXPECT_TRUE(verify_cache_index(cache, store).empty());
  EXPECT_EQ(read(cache / "wheels" / name), "second build");
}

// `step` in a child process that ends as a SIGKILL would: no destructor runs.
template <typename Step>
void killed_after(Step step) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    step();
    ::_exit(::testing::Test::HasFailure() ? 1 : 0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

void expect_only_a_stale_index(const std::vector<std::string>& problems) {
  ASSERT_FALSE(problems.empty());
  for (const auto& problem : problems) {
    EXPECT_NE(problem.find("(run `archbuild cache gc` to rebuild it)"), std::string::npos) << problem;
    EXPECT_EQ(problem.find("both changed"), std::string::npos) << problem;
  }
}

// A rebuild killed after its entry's rename, before the index refresh: the
// index still links the replaced entry's bytes. The replaced entry stays
// aside until the refresh, so verify tells this from an edit of both, and
// gc repairs it.
TEST(CacheIndex, AReplacedEntryStaysAsideUntilTheIndexNoLongerLinksIt) {
  TempDir dir;
  auto cache = dir.path / "cache";
  const auto name = write_two_builds(dir.path);
  WheelStore store(cache);
  const CacheKey key{"cache_format 1\nref v1.0\n", "ffff0000"};
  store.publish(key, {dir.path / "old" / name}, "{}");
  refresh_cache_index(cache, store);
  {
    auto staged = store.stage(key, {dir.path / "new" / name}, "{}");
    staged.commit();
    EXPECT_EQ(store.set_aside().size(), 1u);  // until remove_replaced(), after the refresh
    staged.remove_replaced();
  }
  EXPECT_TRUE(store.set_aside().empty());
  refresh_cache_index(cache, store);
  EXPECT_TRUE(verify_cache_index(cache, store).empty());

  // a refresh that fails: remove_replaced() never comes, and the replaced entry stays
  store.stage(key, {dir.path / "old" / name}, "{}").commit();
  ASSERT_EQ(store.set_aside().size(), 1u);
  expect_only_a_stale_index(verify_cache_index(cache, store));
  collect_garbage(cache, 1000, false, {});
  EXPECT_TRUE(verify_cache_index(cache, store).empty());
  EXPECT_EQ(read(cache / "wheels" / name), "first build");
  // its writer (this process) still runs, so gc left it; gone once it has exited
  ASSERT_EQ(store.set_aside().size(), 1u);
  std::filesystem::remove_all(store.set_aside().front().dir);

  killed_after([&] { store.stage(key, {dir.path / "new" / name}, "{}").commit(); });
  ASSERT_EQ(store.set_aside().size(), 1u);
  expect_only_a_stale_index(verify_cache_index(cache, store));
  collect_garbage(cache, 1000, false, {});
  EXPECT_TRUE(store.set_aside().empty());
  EXPECT_TRUE(verify_cache_index(cache, store).empty());
  EXPECT_EQ(read(cache / "wheels" / name), "second build");
}

// The same for a gc killed between removing an entry and the index refresh.
TEST(CacheIndex, AnEntryGcRemovesStaysAsideUntilTheIndexNoLongerLinksIt) {
  TempDir dir;
  auto cache = dir.path / "cache";
  WheelStore store(cache);
  auto entry = publish_listed_demo(dir.path, store);
  killed_after([&] { ASSERT_TRUE(store.set_aside_if_unchanged(entry)); });
  expect_only_a_stale_index(verify_cache_index(cache, store));
  collect_garbage(cache, 1000, false, {});
  EXPECT_TRUE(store.set_aside().empty());
  EXPECT_TRUE(verify_cache_index(cache, store).empty());
  EXPECT_FALSE(std::filesystem::exists(cache / "wheels" / "demo-1.0-py3-none-any.whl"));
}

// The same with variant wheels: the index's variants document still names
// the set-aside entry's variant wheel (removed) or its variant.json
// (replaced by one with other properties), and reads as behind.
TEST(CacheIndex, AnEntrySetAsideWithVariantWheelsReadsAsAnIndexBehind) {
  TempDir dir;
  auto cache = dir.path / "cache";
  WheelStore store(cache);
  const std::string variant = "demo-1.0-py3-none-any-0123abcd.whl";
  auto publish = [&](const std::string& ref, const std::string& properties) {
    write(dir.path / ref / "demo-1.0-py3-none-any.whl", "wheel " + ref);
    write(dir.path / ref / variant, "variant " + ref);
    write(dir.path / ref / (variant + ".json"), R"({"variants": {"0123abcd": )" + properties + "}}");
    auto entry = store.publish({"cache_format 1\n", "0123abcd"}, {dir.path / ref / "demo-1.0-py3-none-any.whl"}, "{}",
                               {}, {dir.path / ref / variant});
    refresh_cache_index(cache, store);
    return entry;
  };
  auto entry = publish("v1", "{}");
  ASSERT_TRUE(std::filesystem::exists(cache / "wheels" / "demo-1.0-variants.json"));
  ASSERT_TRUE(verify_cache_index(cache, store).empty());

  killed_after([&] { ASSERT_TRUE(store.set_aside_if_unchanged(entry)); });
  expect_only_a_stale_index(verify_cache_index(cache, store));
  collect_garbage(cache, 1000, false, {});
  EXPECT_TRUE(verify_cache_index(cache, store).empty());

  publish("v1", "{}");
  const std::string other = R"({"nvidia": {"sm_arch": ["90_real"]}})";
  write(dir.path / "v2" / "demo-1.0-py3-none-any.whl", "wheel v2");
  write(dir.path / "v2" / variant, "variant v2");
  write(dir.path / "v2" / (variant + ".json"), R"({"variants": {"0123abcd": )" + other + "}}");
  killed_after([&] {
    store
        .stage({"cache_format 1\n", "0123abcd"}, {dir.path / "v2" / "demo-1.0-py3-none-any.whl"}, "{}", {},
               {dir.path / "v2" / variant})
        .commit();
  });
  expect_only_a_stale_index(verify_cache_index(cache, store));
  collect_garbage(cache, 1000, false, {});
  EXPECT_TRUE(verify_cache_index(cache, store).empty());
  EXPECT_NE(read(cache / "wheels" / "demo-1.0-variants.json").find("90_real"), std::string::npos);
}

// A publish touches only its project's page: the other pages keep their
// bytes and time, and verify is clean after each step.
TEST(CacheIndex, APublishRewritesOnlyItsProjectsPage) {
  TempDir dir;
  auto cache = dir.path / "cache";
  WheelStore store(cache);
  auto publish = [&](const std::string& hash, const std::string& file, const std::string& bytes) {
    write(dir.path / hash / file, bytes);
    BuildReport manifest;
    manifest.published = true;
    manifest.wheels = {ReportedWheel::of(dir.path / hash / file)};
    return store.publish({"cache_format 1\nref " + hash + "\n", hash}, {dir.path / hash / file},
                         json_text(manifest.to_json()));
  };
  // No index yet: the first publish writes the whole index.
  auto first = publish("aaaa1111", "demo-1.0-py3-none-any.whl", "demo one");
  publish_to_cache_index(cache, store, first);
  ASSERT_TRUE(std::filesystem::exists(cache / "simple" / "demo" / "index.html"));
  const auto demo_page = read(cache / "simple" / "demo" / "index.html");
  const auto demo_time = std::filesystem::last_write_time(cache / "simple" / "demo" / "index.html");
  auto other = publish("bbbb2222", "other-2.0-py3-none-any.whl", "other two");
  publish_to_cache_index(cache, store, other);
  EXPECT_TRUE(verify_cache_index(cache, store).empty());
  EXPECT_EQ(read(cache / "simple" / "demo" / "index.html"), demo_page);
  EXPECT_EQ(std::filesystem::last_write_time(cache / "simple" / "demo" / "index.html"), demo_time);
  EXPECT_NE(read(cache / "simple" / "index.html").find("other/"), std::string::npos);
  // A second version on the same page; then a name taken over by a newer key.
  publish_to_cache_index(cache, store, publish("cccc3333", "demo-1.1-py3-none-any.whl", "demo one one"));
  auto taken = publish("dddd4444", "demo-1.0-py3-none-any.whl", "demo one, rebuilt elsewhere");
  publish_to_cache_index(cache, store, taken);
  EXPECT_TRUE(verify_cache_index(cache, store).empty());
  EXPECT_EQ(read(cache / "wheels" / "demo-1.0-py3-none-any.whl"), "demo one, rebuilt elsewhere");
  const auto page = read(cache / "simple" / "demo" / "index.html");
  EXPECT_NE(page.find("demo-1.1-py3-none-any.whl"), std::string::npos);
  EXPECT_NE(page.find(sha256_hex("demo one, rebuilt elsewhere")), std::string::npos);
  // The same index as a full refresh writes.
  const auto incremental = read(cache / "simple" / "demo" / "index.html");
  refresh_cache_index(cache, store);
  EXPECT_EQ(read(cache / "simple" / "demo" / "index.html"), incremental);
}

// A wheel in wheels/ swapped together with its page's sha256: the two agree,
// but not with what the store recorded, and verify says so.
TEST(CacheIndex, AWheelAndItsLinkChangedTogetherDifferFromTheStore) {
  TempDir dir;
  auto cache = dir.path / "cache";
  WheelStore store(cache);
  write(dir.path / "build" / "demo-1.0-py3-none-any.whl", "demo one");
  BuildReport manifest;
  manifest.published = true;
  manifest.wheels = {ReportedWheel::of(dir.path / "build" / "demo-1.0-py3-none-any.whl")};
  const std::string key_text = "cache_format 2\nref swap\n";
  auto entry = store.publish({key_text, sha256_hex(key_text)}, {dir.path / "build" / "demo-1.0-py3-none-any.whl"},
                             json_text(manifest.to_json()));
  publish_to_cache_index(cache, store, entry);
  ASSERT_TRUE(verify_cache_index(cache, store).empty());
  const auto served = cache / "wheels" / "demo-1.0-py3-none-any.whl";
  std::filesystem::remove(served);  // a new file, not a write through the store's hard link
  write(served, "something else");
  const auto page = cache / "simple" / "demo" / "index.html";
  auto text = read(page);
  const auto old_digest = sha256_hex(std::string("demo one"));
  text.replace(text.find(old_digest), old_digest.size(), sha256_hex(std::string("something else")));
  write(page, text);
  auto problems = verify_cache_index(cache, store);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("differ from what the store recorded (both changed after publishing)"), std::string::npos)
      << problems[0];
}

TEST(CacheIndex, AnIndexOneEntryBehindServesAnOlderEntrysCopyAndReadsAsStale) {
  // Two builds of one version (two refs) publish one file name; a kill after
  // the second's rename and before the index refresh leaves the index serving
  // the first's copy: stale (gc repairs it), not tampered.
  TempDir dir;
  auto cache = dir.path / "cache";
  WheelStore store(cache);
  auto publish = [&](const std::string& ref, const std::string& bytes) {
    write(dir.path / ref / "demo-1.0-py3-none-any.whl", bytes);
    BuildReport manifest;
    manifest.published = true;
    manifest.wheels = {ReportedWheel::of(dir.path / ref / "demo-1.0-py3-none-any.whl")};
    const std::string key_text = "cache_format 2\nref " + ref + "\n";
    return store.publish({key_text, sha256_hex(key_text)}, {dir.path / ref / "demo-1.0-py3-none-any.whl"},
                         json_text(manifest.to_json()));
  };
  publish_to_cache_index(cache, store, publish("v1.0", "built from v1.0"));
  ASSERT_TRUE(verify_cache_index(cache, store).empty());
  publish("v1.1", "built from v1.1");  // killed before its index refresh
  auto problems = verify_cache_index(cache, store);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("is an older entry's copy; the newest entry's is published but not in the index"),
            std::string::npos)
      << problems[0];
}
