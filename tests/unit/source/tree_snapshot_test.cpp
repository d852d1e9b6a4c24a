#include "source/tree_snapshot.h"

#include <stdlib.h>

#include <gtest/gtest.h>

#include "source/git_session.h"
#include "source/project_dirs.h"
#include "test_support.h"

using namespace archbuild;

namespace {

void run(const std::string& command) {
  const std::string full = "GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t " +
                           command + " >/dev/null 2>&1";
  ASSERT_EQ(std::system(full.c_str()), 0) << command;
}

// A repository with two committed files and .gitignore, and a bare mirror holding its HEAD.
struct Fixture {
  TempDir temp{"archbuild-snapshot"};
  std::filesystem::path repo = temp.path / "repo";
  std::filesystem::path mirror = temp.path / "mirror.git";
  Fixture() {
    write(repo / "setup.py", "print('setup')\n");
    write(repo / "src" / "a.cu", "__global__ void k() {}\n");
    write(repo / ".gitignore", "build/\n");
    run("git -C " + repo.string() + " init -q -b main && git -C " + repo.string() + " add -A && git -C " +
        repo.string() + " commit -q -m one");
    run("git clone -q --bare " + repo.string() + " " + mirror.string());
  }
};

std::string head_of(const std::filesystem::path& repo) {
  auto opened = open_repository(repo.string());
  git_oid id;
  git_reference_name_to_id(&id, opened.get(), "HEAD");
  return oid_hex(id);
}

}  // namespace

TEST(WorkingTreeSnapshot, NothingChangedIsTheCommitItself) {
  Fixture fixture;
  write(fixture.repo / "build" / "out.o", "ignored");  // ignored: not an edit
  EXPECT_FALSE(snapshot_working_tree(fixture.repo, fixture.mirror));
}

TEST(WorkingTreeSnapshot, TakesEditsUntrackedFilesAndDeletionsOnTopOfHead) {
  Fixture fixture;
  write(fixture.repo / "src" / "a.cu", "__global__ void k() { /* edited */ }\n");
  write(fixture.repo / "src" / "new.cu", "// untracked, not ignored\n");
  write(fixture.repo / "build" / "out.o", "ignored");
  std::filesystem::remove(fixture.repo / "setup.py");
  auto snapshot = snapshot_working_tree(fixture.repo, fixture.mirror);
  ASSERT_TRUE(snapshot);
  EXPECT_EQ(snapshot->base_commit, head_of(fixture.repo));
  EXPECT_EQ(snapshot->edited, (std::vector<std::string>{"setup.py", "src/a.cu", "src/new.cu"}));
  EXPECT_EQ(snapshot->edits_sha256.size(), 64u);

  // The snapshot is a commit of the mirror, HEAD its parent, with what is on disk.
  auto mirror = open_repository(fixture.mirror.string());
  git_oid id;
  ASSERT_EQ(git_oid_fromstr(&id, snapshot->commit.c_str()), 0);
  git_commit* raw = nullptr;
  ASSERT_EQ(git_commit_lookup(&raw, mirror.get(), &id), 0);
  GitCommit commit(raw);
  ASSERT_EQ(git_commit_parentcount(commit.get()), 1u);
  EXPECT_EQ(oid_hex(*git_commit_parent_id(commit.get(), 0)), snapshot->base_commit);
  git_tree* raw_tree = nullptr;
  ASSERT_EQ(git_commit_tree(&raw_tree, commit.get()), 0);
  GitTree tree(raw_tree);
  git_tree_entry* entry = nullptr;
  EXPECT_EQ(git_tree_entry_bypath(&entry, tree.get(), "src/new.cu"), 0);
  git_tree_entry_free(entry);
  EXPECT_NE(git_tree_entry_bypath(&entry, tree.get(), "setup.py"), 0);
  EXPECT_NE(git_tree_entry_bypath(&entry, tree.get(), "build/out.o"), 0);

  // The same edits are the same commit; another edit is another one.
  auto again = snapshot_working_tree(fixture.repo, fixture.mirror);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->commit, snapshot->commit);
  write(fixture.repo / "src" / "new.cu", "// edited again\n");
  auto other = snapshot_working_tree(fixture.repo, fixture.mirror);
  ASSERT_TRUE(other);
  EXPECT_NE(other->commit, snapshot->commit);
  EXPECT_NE(other->edits_sha256, snapshot->edits_sha256);
  EXPECT_EQ(other->base_commit, snapshot->base_commit);
}

TEST(WorkingTreeSnapshot, RefusesASymlinkOutOfTheTree) {
  Fixture fixture;
  std::filesystem::create_symlink("/etc/passwd", fixture.repo / "passwd");
  auto why = error_of([&] { snapshot_working_tree(fixture.repo, fixture.mirror); });
  EXPECT_NE(why.find("the symlink 'passwd' -> '/etc/passwd'"), std::string::npos) << why;
}

TEST(DirectorySnapshot, TakesEveryFileAndLeavesOutVcsMetadata) {
  TempDir temp{"archbuild-snapshot"};
  const auto dir = temp.path / "pkg-1.0";
  write(dir / "setup.py", "print('setup')\n");
  write(dir / "third_party" / "glm" / ".git", "gitdir: ../../.git/modules/glm\n");
  write(dir / "third_party" / "glm" / "glm.hpp", "// header\n");
  write(dir / ".hg" / "store" / "data", "x");
  std::filesystem::create_symlink("setup.py", dir / "link.py");
  const auto mirror = temp.path / "mirror.git";
  auto snapshot = snapshot_directory(dir, mirror);
  EXPECT_EQ(snapshot.files, 3u);
  EXPECT_EQ(snapshot.dropped, (std::vector<std::string>{".hg", "third_party/glm/.git"}));
  EXPECT_EQ(snapshot.commit.size(), 40u);
  EXPECT_EQ(snapshot_directory(dir, mirror).commit, snapshot.commit);  // the content names it
  write(dir / "setup.py", "print('changed')\n");
  EXPECT_NE(snapshot_directory(dir, mirror).commit, snapshot.commit);

  std::filesystem::create_symlink("../../outside", dir / "escape");
  auto why = error_of([&] { snapshot_directory(dir, mirror); });
  EXPECT_NE(why.find("'escape' -> '../../outside'"), std::string::npos) << why;
}

TEST(DirectorySnapshot, TheSizeCapHoldsForTheLastFileAndIsCheckedBeforeReadingIt) {
  TempDir temp{"archbuild-snapshot"};
  const auto dir = temp.path / "pkg-1.0";
  write(dir / "setup.py", "print('setup')\n");
  // sparse: 64 MiB listed, nothing on disk; the cap is 1 MiB, the file the only large one
  write(dir / "big.bin", "");
  std::filesystem::resize_file(dir / "big.bin", 64u << 20);
  const auto mirror = temp.path / "mirror.git";
  auto why = error_of([&] { snapshot_directory(dir, mirror, {.max_bytes = 1u << 20, .max_files = 100}); });
  EXPECT_NE(why.find("holds more than 1 MiB"), std::string::npos) << why;
  EXPECT_EQ(snapshot_directory(dir, mirror, {.max_bytes = 128u << 20, .max_files = 100}).files, 2u);
}

TEST(ProjectDirs, NameTheProjectsWithCudaSourcesFirst) {
  TempDir temp{"archbuild-projects"};
  write(temp.path / "setup.py", "");
  write(temp.path / "docs" / "pyproject.toml", "");
  write(temp.path / "ops" / "cuda" / "setup.py", "");
  write(temp.path / "ops" / "cuda" / "src" / "k.cu", "");
  write(temp.path / "build" / "lib" / "setup.py", "");  // build output: skipped
  auto dirs = find_project_dirs(temp.path);
  ASSERT_EQ(dirs.size(), 3u);
  EXPECT_EQ(dirs[0].path, "");
  EXPECT_TRUE(dirs[0].cuda_sources);
  EXPECT_EQ(describe_project_dirs(dirs, ""), "--subdirectory ops/cuda (CUDA sources), --subdirectory docs");
  EXPECT_EQ(describe_project_dirs(dirs, "ops/cuda"), "--subdirectory docs");
}
