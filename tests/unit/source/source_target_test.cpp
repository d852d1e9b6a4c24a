#include "source/source_target.h"

#include <gtest/gtest.h>

#include "recipe/recipe.h"
#include "source/mirror_cache.h"
#include "test_support.h"

using namespace archbuild;

namespace {

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
  EXPECT_NE(text.find("is not a recipe (bitsandbytes, "), std::string::npos) << text;
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
