#include "core/regular_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

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

namespace {

// The filesystem error `body` throws (a test failure if it throws none).
template <typename Body>
std::filesystem::filesystem_error filesystem_error_of(Body body) {
  try {
    body();
  } catch (const std::filesystem::filesystem_error& e) {
    return e;
  }
  ADD_FAILURE() << "no filesystem_error";
  return std::filesystem::filesystem_error("none", std::error_code());
}

}  // namespace

TEST(WriteFileAtomically, ReplacesTheContentAndLeavesNoTemporary) {
  TempDir dir;
  write_file_atomically(dir.path / "stamp", "first, and longer");
  write_file_atomically(dir.path / "stamp", "2");
  EXPECT_EQ(read(dir.path / "stamp"), "2");
  EXPECT_EQ(names_in(dir.path), std::vector<std::string>{"stamp"});
  EXPECT_EQ(std::filesystem::status(dir.path / "stamp").permissions() & std::filesystem::perms::owner_write,
            std::filesystem::perms::owner_write);
}

TEST(WriteFileAtomically, GivesTheExactPermissionsAskedFor) {
  TempDir dir;
  const auto script = std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                      std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                      std::filesystem::perms::others_exec;
  write_file_atomically(dir.path / "nvcc", "#!/bin/sh\n", script);
  EXPECT_EQ(std::filesystem::status(dir.path / "nvcc").permissions(), script);
}

TEST(WriteFileAtomically, ReplacesASymlinkAndNeverWritesThroughIt) {
  TempDir dir;
  write(dir.path / "theirs", "mine");
  std::filesystem::create_symlink(dir.path / "theirs", dir.path / "link");
  write_file_atomically(dir.path / "link", "over");
  EXPECT_EQ(read(dir.path / "theirs"), "mine");
  EXPECT_FALSE(std::filesystem::is_symlink(dir.path / "link"));
  EXPECT_EQ(read(dir.path / "link"), "over");
}

TEST(WriteFileAtomically, ReportsAMissingOrUnwritableDirNamingThePath) {
  TempDir dir;
  const auto missing = dir.path / "no-dir" / "stamp";
  auto error = filesystem_error_of([&] { write_file_atomically(missing, "x"); });
  EXPECT_EQ(error.code(), std::errc::no_such_file_or_directory);
  EXPECT_EQ(error.path1(), missing);
  EXPECT_NE(std::string(error.what()).find(missing.string()), std::string::npos) << error.what();

  if (::geteuid() == 0) GTEST_SKIP() << "root writes into a read-only directory";
  std::filesystem::create_directories(dir.path / "locked");
  write(dir.path / "locked" / "stamp", "old");
  std::filesystem::permissions(dir.path / "locked",
                               std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  error = filesystem_error_of([&] { write_file_atomically(dir.path / "locked" / "stamp", "new"); });
  std::filesystem::permissions(dir.path / "locked", std::filesystem::perms::owner_all);
  EXPECT_EQ(error.code(), std::errc::permission_denied);
  EXPECT_EQ(error.path1(), dir.path / "locked" / "stamp");
  EXPECT_EQ(read(dir.path / "locked" / "stamp"), "old");
}

TEST(WriteFileAtomically, AFailedRenameRemovesTheTemporary) {
  TempDir dir;
  write(dir.path / "taken" / "inside", "x");  // a non-empty directory where the file goes
  auto error = filesystem_error_of([&] { write_file_atomically(dir.path / "taken", "x"); });
  EXPECT_EQ(error.path1(), dir.path / "taken");
  EXPECT_EQ(names_in(dir.path), std::vector<std::string>{"taken"});
}

TEST(PlaceSymlink, PointsALinkAtItsTargetReplacingAnOldOneAndLeavesNoTemporary) {
  TempDir dir;
  write(dir.path / "libstdc++.so.6.0.33", "new");
  write(dir.path / "libstdc++.so.6.0.30", "old");
  std::filesystem::create_symlink(dir.path / "libstdc++.so.6.0.30", dir.path / "libstdc++.so");
  place_symlink(dir.path / "libstdc++.so.6.0.33", dir.path / "libstdc++.so");
  EXPECT_EQ(std::filesystem::read_symlink(dir.path / "libstdc++.so"), dir.path / "libstdc++.so.6.0.33");
  place_symlink(dir.path / "libstdc++.so.6.0.33", dir.path / "libstdc++.so");  // already there: nothing to do
  EXPECT_EQ(read(dir.path / "libstdc++.so.6.0.30"), "old");                    // the old target itself is untouched
  EXPECT_EQ(names_in(dir.path),
            (std::vector<std::string>{"libstdc++.so", "libstdc++.so.6.0.30", "libstdc++.so.6.0.33"}));
}

TEST(PlaceSymlink, ADirectoryInTheWayIsAnErrorNamingTheLinkAndLeavesNoTemporary) {
  TempDir dir;
  write(dir.path / "taken" / "inside", "x");
  auto error = filesystem_error_of([&] { place_symlink("/usr/bin/ccache", dir.path / "taken"); });
  EXPECT_EQ(error.path1(), dir.path / "taken");
  EXPECT_EQ(names_in(dir.path), std::vector<std::string>{"taken"});
  EXPECT_TRUE(std::filesystem::is_directory(dir.path / "taken"));
}

TEST(PlaceSymlink, AFileInTheWayIsReplacedByTheLink) {
  TempDir dir;
  write(dir.path / "target", "t");
  write(dir.path / "libnccl.so", "a stale copy");
  place_symlink(dir.path / "target", dir.path / "libnccl.so");
  EXPECT_TRUE(std::filesystem::is_symlink(dir.path / "libnccl.so"));
  EXPECT_EQ(read(dir.path / "libnccl.so"), "t");
  EXPECT_EQ(names_in(dir.path), (std::vector<std::string>{"libnccl.so", "target"}));
}

TEST(PlaceNeededSymlink, AFailureIsAnEnvironmentErrorNamingTheLink) {
  TempDir dir;
  write(dir.path / "taken" / "inside", "x");
  try {
    place_needed_symlink("/usr/bin/ccache", dir.path / "taken");
    FAIL() << "a directory in the way was not reported";
  } catch (const UserError& error) {
    EXPECT_EQ(error.code(), ExitCode::environment);
    EXPECT_NE(std::string(error.what()).find("cannot link " + (dir.path / "taken").string()), std::string::npos)
        << error.what();
  }
  EXPECT_TRUE(std::filesystem::is_directory(dir.path / "taken"));
}

TEST(OutputFile, CreatesTruncatesAndAppends) {
  TempDir dir;
  const auto log = dir.path / "build.log";
  auto first = OutputFile::append(log);
  first.write("==> configure\n");
  first.write("==> build\n");
  first.close();
  EXPECT_FALSE(first.is_open());
  auto second = OutputFile::append(log);
  second.write("==> done\n");
  second.close();
  EXPECT_EQ(read(log), "==> configure\n==> build\n==> done\n");
  auto junit = OutputFile::create(log);
  junit.write("<testsuites/>\n");
  junit.close();
  EXPECT_EQ(read(log), "<testsuites/>\n");
  EXPECT_EQ(filesystem_error_of([&] { junit.write("late"); }).code(), std::errc::bad_file_descriptor);
}

TEST(OutputFile, NeverOpensThroughASymlinkNorBlocksOnAFifo) {
  TempDir dir;
  write(dir.path / "theirs", "mine");
  std::filesystem::create_symlink(dir.path / "theirs", dir.path / "link");
  EXPECT_EQ(filesystem_error_of([&] { OutputFile::append(dir.path / "link"); }).code(),
            std::errc::too_many_symbolic_link_levels);
  EXPECT_EQ(filesystem_error_of([&] { OutputFile::create(dir.path / "link"); }).path1(), dir.path / "link");
  EXPECT_EQ(read(dir.path / "theirs"), "mine");
  ASSERT_EQ(mkfifo((dir.path / "fifo").c_str(), 0600), 0);
  EXPECT_EQ(filesystem_error_of([&] { OutputFile::create(dir.path / "fifo"); }).code(),
            std::errc::no_such_device_or_address);  // no reader: refused at once
}

TEST(OutputFile, AFullDiskIsAnErrorCarryingEnospc) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  auto file = OutputFile::append("/dev/full");
  auto error = filesystem_error_of([&] { file.write("a line of the build log\n"); });
  EXPECT_EQ(error.code(), std::errc::no_space_on_device);
  EXPECT_EQ(error.path1(), "/dev/full");
  EXPECT_EQ(failure_of([&] { fail_writing(error, "/dev"); }).first, ExitCode::environment);
  EXPECT_EQ(filesystem_error_of([&] { write_whole_file("/dev/full", "x"); }).code(), std::errc::no_space_on_device);
}
