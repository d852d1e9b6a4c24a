#include "core/regular_file.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include "core/error.h"
#include "test_support.h"

using namespace archbuild;

namespace {

template <typename Body>
std::pair<ExitCode, std::string> failure_of(Body body) {
  try {
    body();
  } catch (const UserError& e) {
    return {e.code(), e.what()};
  }
  return {ExitCode::success, ""};
}

}  // namespace

TEST(ReadOwnFile, ReadsARegularFileAndIsEmptyForAMissingOne) {
  TempDir dir;
  write(dir.path / "key.txt", "cache_format 1\n");
  EXPECT_EQ(read_own_file(dir.path / "key.txt", 1024), "cache_format 1\n");
  EXPECT_FALSE(read_own_file(dir.path / "absent.txt", 1024));
  EXPECT_FALSE(read_own_file(dir.path / "no-dir" / "key.txt", 1024));
}

TEST(ReadOwnFile, RefusesAFifoALinkADeviceAndAnOversizedFileNamingThem) {
  TempDir dir;
  ASSERT_EQ(mkfifo((dir.path / "fifo").c_str(), 0600), 0);
  auto [code, message] = failure_of([&] { read_own_file(dir.path / "fifo", 1024); });  // must not block
  EXPECT_EQ(code, ExitCode::bad_input);
  EXPECT_NE(message.find((dir.path / "fifo").string() + " is a FIFO, not a regular file"), std::string::npos);
  write(dir.path / "target", "text");
  std::filesystem::create_symlink(dir.path / "target", dir.path / "link");
  std::tie(code, message) = failure_of([&] { read_own_file(dir.path / "link", 1024); });
  EXPECT_EQ(code, ExitCode::bad_input);
  EXPECT_NE(message.find("is a symbolic link"), std::string::npos) << message;
  std::filesystem::create_symlink("/dev/zero", dir.path / "zero");
  EXPECT_EQ(failure_of([&] { read_own_file(dir.path / "zero", 1024); }).first, ExitCode::bad_input);
  write(dir.path / "big", std::string(3 << 20, 'x'));
  std::tie(code, message) = failure_of([&] { read_own_file(dir.path / "big", 1 << 20); });
  EXPECT_EQ(code, ExitCode::bad_input);
  EXPECT_NE(message.find("is larger than 1 MiB"), std::string::npos) << message;
}

TEST(RegularFile, HashesOnlyRegularFiles) {
  TempDir dir;
  write(dir.path / "abc", "abc");
  std::string hex;
  EXPECT_EQ(hash_regular_file(dir.path / "abc", hex), "");
  EXPECT_EQ(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  ASSERT_EQ(mkfifo((dir.path / "fifo").c_str(), 0600), 0);
  EXPECT_EQ(hash_regular_file(dir.path / "fifo", hex), "is a FIFO, not a regular file");
}

TEST(WriteWholeFile, WritesAndNeverFollowsALink) {
  TempDir dir;
  write_whole_file(dir.path / "page", "first");
  write_whole_file(dir.path / "page", "2");
  EXPECT_EQ(read(dir.path / "page"), "2");
  write(dir.path / "theirs", "mine");
  std::filesystem::create_symlink(dir.path / "theirs", dir.path / "link");
  EXPECT_THROW(write_whole_file(dir.path / "link", "over"), std::filesystem::filesystem_error);
  EXPECT_EQ(read(dir.path / "theirs"), "mine");
}

TEST(FailWriting, AFullDiskNamesWhereAndIsTheEnvironment) {
  std::filesystem::filesystem_error full("cannot copy", "/c/store/.tmp-x/wheels/a.whl",
                                         std::make_error_code(std::errc::no_space_on_device));
  auto [code, message] = failure_of([&] { fail_writing(full, "/c/store"); });
  EXPECT_EQ(code, ExitCode::environment);
  EXPECT_EQ(message.rfind("no space left on /c/store (", 0), 0u) << message;
  std::filesystem::filesystem_error denied("cannot copy", "/c/x", std::make_error_code(std::errc::permission_denied));
  EXPECT_THROW(fail_writing(denied, "/c"), std::filesystem::filesystem_error);
}
