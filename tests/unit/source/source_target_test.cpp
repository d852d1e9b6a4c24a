#include "source/source_target.h"

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/cache_layout.h"
#include "core/sha256.h"
#include "core/strings.h"
#include "recipe/recipe.h"
#include "source/git_session.h"
#include "source/mirror_cache.h"
#include "test_support.h"

using namespace archbuild;

namespace {

// Runs a git command line (identity set) in the shell, for the repositories these tests make.
void run_source_target_git(const std::string& command) {
  const std::string full = "GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t " +
                           command + " >/dev/null 2>&1";
  ASSERT_EQ(std::system(full.c_str()), 0) << command;
}

// A repository at `repo` on branch main with setup.py and pkg/sub/setup.py committed.
void make_source_target_repository(const std::filesystem::path& repo) {
  write(repo / "setup.py", "from setuptools import setup\nsetup(name='repo')\n");
  write(repo / "pkg" / "sub" / "setup.py", "from setuptools import setup\nsetup(name='sub')\n");
  const std::string git = "git -C " + repo.string();
  run_source_target_git(git + " init -q -b main && " + git + " add -A && " + git + " commit -q -m one");
}

std::string source_target_head_of(const std::filesystem::path& repo) {
  auto opened = open_repository(repo.string());
  git_oid id;
  EXPECT_EQ(git_reference_name_to_id(&id, opened.get(), "HEAD"), 0);
  return oid_hex(id);
}

bool source_target_line_holds(const std::vector<std::string>& lines, const std::string& part) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& line) { return line.find(part) != std::string::npos; });
}

class SourceTargetTest : public ::testing::Test {
 protected:
  SourceTarget resolve(const SourceQuery& query) const {
    return resolve_source_target(query, book_, mirrors_, /*offline=*/true);
  }
  std::string error_of(const SourceQuery& query) const {
    try {
      resolve(query);
    } catch (const UserError& error) {
      EXPECT_EQ(error.code(), ExitCode::bad_input) << error.what();
      return error.what();
    }
    ADD_FAILURE() << "resolved " << query.what;
    return "";
  }

  TempDir dir_{"archbuild-target"};
  RecipeBook book_ = RecipeBook::load(ARCHBUILD_SOURCE_DIR "/recipes", ARCHBUILD_SOURCE_DIR "/patches");
  MirrorCache mirrors_{dir_.path / "cache"};
};

}  // namespace

TEST_F(SourceTargetTest, ARecipeNameIsItsRepositoryAtItsDefaultRef) {
  auto target = resolve({"torch", "", "", ""});
  EXPECT_EQ(target.name, "torch");
  EXPECT_EQ(target.url, "https://github.com/pytorch/pytorch.git");
  EXPECT_EQ(target.ref, book_.find("torch")->default_ref);
  EXPECT_EQ(target.work_tree_name, target.ref);
  ASSERT_NE(target.recipe, nullptr);
  EXPECT_EQ(target.recipe->name, "torch");
  EXPECT_TRUE(target.submodules);
}

TEST_F(SourceTargetTest, APlainDirectoryIsBuiltAsItIsOnDisk) {
  write(dir_.path / "proj" / "setup.py", "from setuptools import setup\nsetup(name='proj')\n");
  auto target = resolve({(dir_.path / "proj").string(), "", "", ""});
  EXPECT_EQ(target.name, "proj");
  EXPECT_EQ(target.recipe->name, "cpp-extension");  // no recipe names it: the generic one
  ASSERT_TRUE(target.snapshot);
  EXPECT_EQ(target.ref, target.snapshot->commit);
  EXPECT_EQ(target.work_tree_name, "local");
  EXPECT_FALSE(target.submodules);
  ASSERT_FALSE(target.notes.empty());
  EXPECT_NE(target.notes.back().find("as it is on disk"), std::string::npos) << target.notes.back();
  // a ref names a commit, and a plain directory has none
  EXPECT_NE(error_of({(dir_.path / "proj").string(), "v1.0", "", ""}).find("is no git repository"), std::string::npos);
}

TEST_F(SourceTargetTest, ASubdirectoryNamesTheProjectApart) {
  write(dir_.path / "mono" / "kernels" / "setup.py", "from setuptools import setup\nsetup(name='k')\n");
  auto target = resolve({(dir_.path / "mono").string(), "", "", "kernels"});
  EXPECT_EQ(target.subdirectory, "kernels");
  EXPECT_EQ(target.name, "mono-kernels");
  EXPECT_NE(error_of({(dir_.path / "mono").string(), "", "", "../escape"}).find("--subdirectory"), std::string::npos);
}

TEST_F(SourceTargetTest, ARecipeGoesWithAPathOrUrlNotWithARecipeName) {
  EXPECT_NE(error_of({"torch", "", "torchvision", ""}).find("--recipe goes with a PATH, URL"), std::string::npos);
  EXPECT_NE(error_of({"x", "", "no-such-recipe", ""}).find("--recipe no-such-recipe: no such recipe"),
            std::string::npos);
  // a recipe without a repository of its own is a recipe to build a path with
  EXPECT_NE(error_of({"cpp-extension", "", "", ""}).find("has no repository of its own"), std::string::npos);
}

TEST_F(SourceTargetTest, WhatIsNoTargetIsRefusedNamingTheKinds) {
  const auto text = error_of({"no-such-thing", "", "", ""});
  EXPECT_NE(text.find("is not a recipe (apex, autoawq-kernels, bitsandbytes, "), std::string::npos) << text;
  EXPECT_NE(text.find(", torch, "), std::string::npos) << text;
  EXPECT_NE(text.find("pypi:NAME[==VERSION]"), std::string::npos) << text;
}

TEST_F(SourceTargetTest, ARefOrSubdirectoryGivenTwiceIsRefusedBeforeAnyFetch) {
  EXPECT_NE(error_of({"git+https://example.invalid/a.git@v1#subdirectory=x", "v2", "", ""})
                .find("names the ref v1 and --ref names v2"),
            std::string::npos);
  EXPECT_NE(error_of({"git+https://example.invalid/a.git#subdirectory=x", "", "", "y"})
                .find("names #subdirectory=x and --subdirectory y"),
            std::string::npos);
  EXPECT_NE(error_of({"https://example.invalid/a.git", "../../etc", "", ""}).find("is not a valid git ref name"),
            std::string::npos);
  EXPECT_NE(error_of({"pypi:demo==1.0", "2.0", "", ""}).find("the version is its ref"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir_.path / "cache" / "mirrors"));  // nothing fetched
}

TEST_F(SourceTargetTest, ACleanRepositoryIsBuiltAtTheCommitItsBranchHolds) {
  const auto repo = dir_.path / "repo";
  make_source_target_repository(repo);
  auto target = resolve({repo.string() + "/", "", "", ""});  // a trailing slash names the same repository
  EXPECT_EQ(target.url, repo.string());
  EXPECT_EQ(target.name, "repo");
  EXPECT_EQ(target.ref, source_target_head_of(repo));
  EXPECT_EQ(target.work_tree_name, "main");
  EXPECT_FALSE(target.snapshot);  // nothing edited: the commit itself
  EXPECT_TRUE(target.warnings.empty());
  EXPECT_TRUE(source_target_line_holds(target.notes, "building " + repo.string() + "'s branch main at"))
      << join(target.notes, "\n");
  ASSERT_NE(target.recipe, nullptr);
  EXPECT_EQ(target.recipe->name, "cpp-extension");
}

TEST_F(SourceTargetTest, AnEditedRepositoryIsASnapshotOnTopOfItsHeadWithAWarning) {
  const auto repo = dir_.path / "repo";
  make_source_target_repository(repo);
  write(repo / "setup.py", "from setuptools import setup\nsetup(name='edited')\n");
  auto target = resolve({repo.string(), "", "", ""});
  ASSERT_TRUE(target.snapshot);
  EXPECT_EQ(target.snapshot->base_commit, source_target_head_of(repo));
  EXPECT_EQ(target.ref, target.snapshot->commit);
  EXPECT_NE(target.ref, source_target_head_of(repo));
  EXPECT_EQ(target.work_tree_name, "main");
  ASSERT_EQ(target.warnings.size(), 1u);
  EXPECT_NE(target.warnings[0].find("as it is on disk: branch main at"), std::string::npos) << target.warnings[0];
  EXPECT_NE(target.warnings[0].find("1 edited path (setup.py)"), std::string::npos) << target.warnings[0];
}

TEST_F(SourceTargetTest, ARefBuildsALocalRepositoryExactlyAndMustBeAGitRefName) {
  const auto repo = dir_.path / "repo";
  make_source_target_repository(repo);
  write(repo / "setup.py", "edited, and not built: --ref names a commit\n");
  auto target = resolve({repo.string(), "main", "", ""});
  EXPECT_EQ(target.ref, "main");
  EXPECT_EQ(target.work_tree_name, "main");
  EXPECT_FALSE(target.snapshot);
  EXPECT_TRUE(target.warnings.empty());
  EXPECT_NE(error_of({repo.string(), "a..b", "", ""}).find("--ref 'a..b' is not a valid git ref name"),
            std::string::npos);
}

TEST_F(SourceTargetTest, APathInsideARepositoryIsThatSubdirectoryOfIt) {
  const auto repo = dir_.path / "repo";
  make_source_target_repository(repo);
  auto inside = resolve({(repo / "pkg" / "sub").string(), "", "", ""});
  EXPECT_EQ(inside.url, repo.string());
  EXPECT_EQ(inside.subdirectory, "pkg/sub");
  EXPECT_EQ(inside.name, "repo-sub");
  EXPECT_EQ(inside.identity(), repo.string() + "#subdirectory=pkg/sub");
  // --subdirectory goes on from the path's place in the repository
  auto joined = resolve({(repo / "pkg").string(), "", "", "sub"});
  EXPECT_EQ(joined.subdirectory, "pkg/sub");
  EXPECT_EQ(joined.ref, inside.ref);
  // a directory the repository tracks nothing under is a plain directory
  write(repo / "untracked" / "setup.py", "from setuptools import setup\nsetup(name='u')\n");
  auto plain = resolve({(repo / "untracked").string(), "", "", ""});
  EXPECT_EQ(plain.url, (repo / "untracked").string());
  EXPECT_TRUE(plain.subdirectory.empty());
  EXPECT_EQ(plain.work_tree_name, "local");
}

TEST_F(SourceTargetTest, ALocalCloneOfARecipesRepositoryIsBuiltWithThatRecipe) {
  const auto repo = dir_.path / "fork";
  make_source_target_repository(repo);
  const Recipe* torch = book_.find("torch");
  ASSERT_NE(torch, nullptr);
  // its origin remote, spelled another way than the recipe's repository
  run_source_target_git("git -C " + repo.string() + " remote add origin git@github.com:pytorch/pytorch");
  auto target = resolve({repo.string(), "", "", ""});
  ASSERT_NE(target.recipe, nullptr);
  EXPECT_EQ(target.recipe->name, "torch");
  EXPECT_EQ(target.name, "torch");
  EXPECT_EQ(target.url, repo.string());  // the clone as it is on disk, not the recipe's repository
  EXPECT_TRUE(target.submodules);        // the recipe's
  EXPECT_TRUE(
      source_target_line_holds(target.notes,
                               "using recipe torch for " + repo.string() +
                                   " (its origin remote git@github.com:pytorch/pytorch is the recipe's repository; "
                                   "--recipe cpp-extension builds it without)"))
      << join(target.notes, "\n");
  // --recipe decides, and then nothing is picked or said
  auto generic = resolve({repo.string(), "", "cpp-extension", ""});
  EXPECT_EQ(generic.recipe->name, "cpp-extension");
  EXPECT_EQ(generic.name, "fork");
  EXPECT_FALSE(source_target_line_holds(generic.notes, "using recipe")) << join(generic.notes, "\n");
  // another origin: the generic recipe, no note
  run_source_target_git("git -C " + repo.string() + " remote set-url origin https://github.com/someone/fork");
  auto other = resolve({repo.string(), "", "", ""});
  EXPECT_EQ(other.recipe->name, "cpp-extension");
  EXPECT_FALSE(source_target_line_holds(other.notes, "using recipe")) << join(other.notes, "\n");
}

TEST_F(SourceTargetTest, ARecipesRepositoryUrlPicksThatRecipeUnlessOneIsNamed) {
  const Recipe* torch = book_.find("torch");
  ASSERT_NE(torch, nullptr);
  auto target = resolve({"https://github.com/pytorch/pytorch", "", "", ""});  // same repository, spelled otherwise
  EXPECT_EQ(target.name, "torch");
  EXPECT_EQ(target.recipe, torch);
  EXPECT_EQ(target.ref, torch->default_ref);  // the recipe's: offline, no remote is asked
  EXPECT_EQ(target.submodules, torch->submodules);
  EXPECT_TRUE(source_target_line_holds(target.notes, "using recipe torch for https://github.com/pytorch/pytorch"))
      << join(target.notes, "\n");

  auto fork = resolve({"https://example.invalid/someone/pytorch-fork.git", torch->default_ref, "torch", ""});
  EXPECT_EQ(fork.name, "pytorch-fork");
  EXPECT_EQ(fork.recipe, torch);
  EXPECT_EQ(fork.ref, torch->default_ref);
  EXPECT_TRUE(fork.notes.empty()) << join(fork.notes, "\n");
}

TEST_F(SourceTargetTest, APipUrlsRefAndSubdirectoryMayRepeatTheOptionsSaying) {
  const Recipe* torch = book_.find("torch");
  ASSERT_NE(torch, nullptr);
  const std::string url = "git+" + torch->repository + "@" + torch->default_ref + "#subdirectory=tools";
  auto target = resolve({url, torch->default_ref, "", "tools"});
  EXPECT_EQ(target.url, torch->repository);  // without git+
  EXPECT_EQ(target.ref, torch->default_ref);
  EXPECT_EQ(target.subdirectory, "tools");
  EXPECT_EQ(target.name, "torch");  // a recipe's repository keeps the recipe's name
  EXPECT_EQ(target.identity(), "github.com/pytorch/pytorch#subdirectory=tools");
}

TEST_F(SourceTargetTest, AnSdistFileMustSayItsNameAndVersionAndTakesNoRef) {
  write(dir_.path / "download.tar.gz", "not read: refused by its name first");
  EXPECT_NE(error_of({(dir_.path / "download.tar.gz").string(), "", "", ""}).find("does not say its name and version"),
            std::string::npos);
  write(dir_.path / "demo-1.0.tar.gz", "not read: --ref is refused first");
  EXPECT_NE(error_of({(dir_.path / "demo-1.0.tar.gz").string(), "2.0", "", ""})
                .find("--ref does not go with the sdist " + (dir_.path / "demo-1.0.tar.gz").string() +
                      ": its version is 1.0"),
            std::string::npos);
}

TEST_F(SourceTargetTest, AWorkTreeOfAnotherSourceByTheSameNameIsNotReused) {
  const Recipe* torch = book_.find("torch");
  ASSERT_NE(torch, nullptr);
  const auto worktree = CacheLayout(dir_.path / "cache").worktree("torch", torch->default_ref);
  std::filesystem::create_directories(worktree);
  run_source_target_git("git -C " + worktree.string() + " init -q && git -C " + worktree.string() +
                        " remote add origin git@github.com:pytorch/pytorch.git");
  // the same repository spelled otherwise: its work tree
  EXPECT_EQ(resolve({"torch", "", "", ""}).work_tree_name, torch->default_ref);
  run_source_target_git("git -C " + worktree.string() + " remote set-url origin https://example.invalid/other.git");
  EXPECT_EQ(resolve({"torch", "", "", ""}).work_tree_name,
            torch->default_ref + "-" + sha256_hex(torch->repository).substr(0, 8));
}
