#include "core/tree_files.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/error.h"

using namespace archbuild;
namespace fs = std::filesystem;

namespace {

std::string file_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A tree and, next to it, a directory outside the tree a symlink in it points at.
class TreeFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/archbuild-tree-files-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    base_ = pattern;
    tree_ = base_ / "tree";
    outside_ = base_ / "outside";
    fs::create_directories(tree_ / "src");
    fs::create_directories(outside_ / "victim" / ".git");
    std::ofstream(outside_ / "file.txt") << "precious\n";
    std::ofstream(tree_ / "src" / "a.c") << "int a;\n";
    fs::create_directory_symlink(outside_, tree_ / "lnk");
  }
  void TearDown() override { fs::remove_all(base_); }

  fs::path base_, tree_, outside_;
};

}  // namespace

TEST(SymlinkTarget, RelativeTargetsThatStayInside) {
  EXPECT_EQ(symlink_target_problem("lnk", "src"), "");
  EXPECT_EQ(symlink_target_problem("lnk", "./src/a.c"), "");
  EXPECT_EQ(symlink_target_problem("a/b/lnk", "../../src"), "");
  EXPECT_EQ(symlink_target_problem("a/lnk", "../a/../src"), "");
  EXPECT_EQ(symlink_target_problem("lnk", "/etc"), "is absolute");
  EXPECT_EQ(symlink_target_problem("lnk", ""), "is empty");
  EXPECT_EQ(symlink_target_problem("lnk", ".."), "climbs out of the tree");
  EXPECT_EQ(symlink_target_problem("a/b/lnk", "../../../outside"), "climbs out of the tree");
  EXPECT_EQ(symlink_target_problem("lnk", "src/../../outside"), "climbs out of the tree");
}

TEST_F(TreeFilesTest, SeesSymlinksWithoutFollowingThem) {
  TreeFiles files(tree_);
  EXPECT_EQ(files.kind("lnk"), TreeFiles::Kind::symlink);
  EXPECT_EQ(files.kind("src"), TreeFiles::Kind::directory);
  EXPECT_EQ(files.kind("src/a.c"), TreeFiles::Kind::file);
  EXPECT_EQ(files.kind("lnk/file.txt"), TreeFiles::Kind::absent);  // behind the symlink: not looked at
  TreeFiles::Kind kind = TreeFiles::Kind::absent;
  EXPECT_EQ(files.blocked_prefix("lnk/victim/x", &kind), "lnk");
  EXPECT_EQ(kind, TreeFiles::Kind::symlink);
  EXPECT_EQ(files.blocked_prefix("src/a.c/x"), "src/a.c");
  EXPECT_EQ(files.blocked_prefix("src/new/x"), "");
  EXPECT_EQ(files.files_below("src"), std::vector<std::string>{"src/a.c"});
  EXPECT_THROW(files.kind("src/../lnk"), UserError);
}

TEST_F(TreeFilesTest, NeverWritesThroughASymlink) {
  TreeFiles files(tree_);
  EXPECT_THROW(files.write_file("lnk/file.txt", "owned\n"), UserError);
  EXPECT_THROW(files.write_symlink("lnk/evil", "/"), UserError);
  EXPECT_EQ(file_text(outside_ / "file.txt"), "precious\n");
  EXPECT_FALSE(fs::exists(outside_ / "evil"));
  // A symlink at the file itself is replaced, not followed.
  fs::create_symlink(outside_ / "file.txt", tree_ / "src" / "b.c");
  files.write_file("src/b.c", "int b;\n");
  EXPECT_FALSE(fs::is_symlink(tree_ / "src" / "b.c"));
  EXPECT_EQ(file_text(tree_ / "src" / "b.c"), "int b;\n");
  EXPECT_EQ(file_text(outside_ / "file.txt"), "precious\n");
  files.write_file("new/dir/c.c", "int c;\n", true);
  EXPECT_EQ(file_text(tree_ / "new" / "dir" / "c.c"), "int c;\n");
  EXPECT_NE(fs::status(tree_ / "new" / "dir" / "c.c").permissions() & fs::perms::owner_exec, fs::perms::none);
}

TEST_F(TreeFilesTest, NeverRemovesThroughASymlink) {
  TreeFiles files(tree_);
  EXPECT_FALSE(files.remove("lnk/victim"));
  EXPECT_FALSE(files.remove_file("lnk/file.txt"));
  EXPECT_TRUE(fs::exists(outside_ / "victim" / ".git"));
  EXPECT_TRUE(fs::exists(outside_ / "file.txt"));
  // A directory holding a symlink: the link goes, not what it points at.
  fs::create_directories(tree_ / "sub" / "deep");
  fs::create_directory_symlink(outside_, tree_ / "sub" / "deep" / "out");
  EXPECT_TRUE(files.remove("sub"));
  EXPECT_FALSE(fs::exists(tree_ / "sub"));
  EXPECT_EQ(file_text(outside_ / "file.txt"), "precious\n");
  // The symlink itself can go.
  EXPECT_TRUE(files.remove_file("lnk"));
  EXPECT_TRUE(fs::exists(outside_ / "victim" / ".git"));
}

TEST_F(TreeFilesTest, RemovesOnlyEmptyParents) {
  TreeFiles files(tree_);
  files.write_file("a/b/c/new.txt", "x");
  std::ofstream(tree_ / "a" / "keep.txt") << "build output";
  EXPECT_TRUE(files.remove_file("a/b/c/new.txt"));
  files.remove_empty_parents("a/b/c/new.txt");
  EXPECT_FALSE(fs::exists(tree_ / "a" / "b"));
  EXPECT_EQ(file_text(tree_ / "a" / "keep.txt"), "build output");
  files.remove_empty_parents("src/a.c");  // not empty
  EXPECT_TRUE(fs::exists(tree_ / "src" / "a.c"));
}
