#include "core/file_lock.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include "core/error.h"
#include "test_support.h"

using namespace archbuild;

namespace {

ExitCode lock_exit(const std::filesystem::path& path) {
  try {
    FileLock lock(path);
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
    return e.code();
  }
  return ExitCode::success;
}

}  // namespace

TEST(FileLock, CreatesAndTakesARegularLockFile) {
  TempDir dir;
  EXPECT_EQ(lock_exit(dir.path / "sub" / "key.lock"), ExitCode::success);
  EXPECT_TRUE(std::filesystem::is_regular_file(dir.path / "sub" / "key.lock"));
}

TEST(FileLock, RefusesASymbolicLinkWithoutCreatingItsTarget) {
  TempDir dir;
  std::filesystem::create_symlink(dir.path / "elsewhere", dir.path / "key.lock");
  EXPECT_EQ(lock_exit(dir.path / "key.lock"), ExitCode::bad_input);
  EXPECT_FALSE(std::filesystem::exists(dir.path / "elsewhere"));
  write(dir.path / "theirs", "mine");
  std::filesystem::create_symlink(dir.path / "theirs", dir.path / "other.lock");
  EXPECT_EQ(lock_exit(dir.path / "other.lock"), ExitCode::bad_input);
  EXPECT_EQ(read(dir.path / "theirs"), "mine");
}

TEST(FileLock, RefusesAFifoOrADirectoryWithoutBlocking) {
  TempDir dir;
  ASSERT_EQ(mkfifo((dir.path / "fifo.lock").c_str(), 0600), 0);
  EXPECT_EQ(lock_exit(dir.path / "fifo.lock"), ExitCode::bad_input);
  std::filesystem::create_directory(dir.path / "dir.lock");
  EXPECT_EQ(lock_exit(dir.path / "dir.lock"), ExitCode::bad_input);
}
