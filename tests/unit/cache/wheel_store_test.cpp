#include "cache/wheel_store.h"

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <gtest/gtest.h>

#include "cache/cache_test_support.h"
#include "core/error.h"
#include "core/sha256.h"
#include "test_support.h"

using namespace archbuild;

TEST(WheelStore, AFifoAtKeyTxtIsRefusedNamingItWithoutBlocking) {
  TempDir dir;
  write(dir.path / "demo-1.0-py3-none-any.whl", "wheel");
  WheelStore store(dir.path / "cache");
  auto key = key_of("cache_format 1\n");
  auto entry = store.publish(key, {dir.path / "demo-1.0-py3-none-any.whl"}, "{}");
  std::filesystem::remove(entry.dir / "key.txt");
  ASSERT_EQ(mkfifo((entry.dir / "key.txt").c_str(), 0600), 0);
  try {
    store.entries();
    FAIL() << "a FIFO key.txt was accepted";
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    EXPECT_NE(std::string(e.what()).find((entry.dir / "key.txt").string() + " is a FIFO"), std::string::npos);
  }
  std::filesystem::remove(entry.dir / "key.txt");
  write(entry.dir / "key.txt", key.text);
  ASSERT_EQ(mkfifo((dir.path / "fifo").c_str(), 0600), 0);
  std::filesystem::remove(entry.dir / "manifest.json");
  std::filesystem::create_symlink(dir.path / "fifo", entry.dir / "manifest.json");
  EXPECT_THROW(store.find(key), UserError);
}

TEST(WheelStore, AStagedEntryIsInvisibleUntilCommittedAndRemovedIfNot) {
  TempDir dir;
  write(dir.path / "demo-1.0-py3-none-any.whl", "wheel");
  WheelStore store(dir.path / "cache");
  auto key = key_of("cache_format 1\nref a\n");
  {
    auto staged = store.stage(key, {dir.path / "demo-1.0-py3-none-any.whl"}, "{}");
    EXPECT_FALSE(store.find(key));
    EXPECT_EQ(names_in(store.root()).size(), 1u);  // the .tmp- dir
  }
  EXPECT_EQ(names_in(store.root()), std::vector<std::string>{});
  auto staged = store.stage(key, {dir.path / "demo-1.0-py3-none-any.whl"}, "{}");
  auto entry = staged.commit();
  EXPECT_EQ(entry.key_text, key.text);
  EXPECT_EQ(names_in(store.root()), std::vector<std::string>{key.hash});
}

TEST(WheelStore, RemoveIfUnchangedRemovesOnceAndSparesAReplacedEntry) {
  TempDir dir;
  write(dir.path / "demo-1.0-py3-none-any.whl", "wheel");
  WheelStore store(dir.path / "cache");
  auto key = key_of("cache_format 1\nref b\n");
  auto listed = store.publish(key, {dir.path / "demo-1.0-py3-none-any.whl"}, "{}");
  EXPECT_TRUE(store.remove_if_unchanged(listed));
  EXPECT_FALSE(store.remove_if_unchanged(listed));  // a second gc with the same listing
  store.publish(key, {dir.path / "demo-1.0-py3-none-any.whl"}, "{}");
  std::filesystem::last_write_time(store.root() / key.hash / "manifest.json", listed.published + std::chrono::hours(1));
  EXPECT_FALSE(store.remove_if_unchanged(listed));  // republished since it was listed
  EXPECT_TRUE(store.find(key));
}

TEST(WheelStore, AFullDiskAtPublishSaysSoAndLeavesNothingHalfWritten) {
  TempDir dir;
  auto store_dir = dir.path / "cache" / "store";
  std::filesystem::create_directories(store_dir);
  if (::mount("tmpfs", store_dir.c_str(), "tmpfs", 0, "size=64k") != 0)
    GTEST_SKIP() << "needs a small tmpfs (root, CAP_SYS_ADMIN) to fill: mount failed: " << std::strerror(errno);
  struct Unmount {
    std::filesystem::path dir;
    ~Unmount() { ::umount2(dir.c_str(), MNT_DETACH); }
  } unmount{store_dir};
  write(dir.path / "big-1.0-py3-none-any.whl", std::string(256 << 10, 'w'));
  WheelStore store(dir.path / "cache");
  try {
    store.publish(key_of("cache_format 1\nref full\n"), {dir.path / "big-1.0-py3-none-any.whl"}, "{}");
    FAIL() << "a publish onto a full disk succeeded";
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), ExitCode::environment);
    EXPECT_EQ(std::string(e.what()).rfind("no space left on " + store_dir.string(), 0), 0u) << e.what();
  }
  EXPECT_EQ(names_in(store_dir), std::vector<std::string>{});
}
