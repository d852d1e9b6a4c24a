#include "recipe/repository_url.h"

#include <gtest/gtest.h>

namespace archbuild {
namespace {

TEST(RepositoryUrl, SpellingsOfOneGithubRepositoryAreOneIdentity) {
  const std::string canonical = "github.com/pytorch/vision";
  for (const std::string url :
       {"https://github.com/pytorch/vision", "https://github.com/pytorch/vision.git",
        "https://github.com/pytorch/vision/", "https://github.com/pytorch/vision.git/",
        "http://github.com/pytorch/vision", "https://GitHub.COM/pytorch/vision", "git@github.com:pytorch/vision.git",
        "git@github.com:pytorch/vision", "ssh://git@github.com/pytorch/vision.git",
        "ssh://git@github.com:22/pytorch/vision", "https://github.com:443/pytorch/vision",
        "git://github.com/pytorch/vision", "https://user:token@github.com/pytorch/vision",
        "  https://github.com/pytorch//vision  "})
    EXPECT_EQ(repository_identity(url), canonical) << url;
  EXPECT_TRUE(same_repository("git@github.com:pytorch/vision.git", "https://github.com/pytorch/vision"));
}

TEST(RepositoryUrl, DifferentRepositoriesStayApart) {
  EXPECT_FALSE(same_repository("https://github.com/pytorch/vision", "https://github.com/pytorch/audio"));
  EXPECT_FALSE(same_repository("https://github.com/pytorch/vision", "https://gitlab.com/pytorch/vision"));
  // Paths are case-sensitive, but on GitHub and GitLab, which find owner and name in any case
  // (a clone's origin spelled https://github.com/ist-daslab/Marlin is the recipe's repository).
  EXPECT_FALSE(same_repository("https://git.example/o/r", "https://git.example/O/R"));
  EXPECT_FALSE(same_repository("https://git.example/o/r", "https://git.example/o/R.git"));
  EXPECT_TRUE(same_repository("https://github.com/pytorch/vision", "git@github.com:PyTorch/Vision.git"));
  EXPECT_TRUE(same_repository("https://gitlab.com/o/r", "https://GitLab.com/O/R"));
  EXPECT_FALSE(same_repository("https://github.com/pytorch/vision", "https://github.com/PyTorch/Visions"));
  EXPECT_EQ(repository_identity("https://github.com/PyTorch/Vision"), "github.com/PyTorch/Vision");  // keys keep it
  EXPECT_FALSE(same_repository("https://git.example/o/r", "https://git.example:8443/o/r"));
  // Text that is no URL matches nothing, not even itself.
  EXPECT_EQ(repository_identity("torchvision"), "");
  EXPECT_FALSE(same_repository("torchvision", "torchvision"));
  EXPECT_FALSE(same_repository("", ""));
}

TEST(RepositoryUrl, FileUrlsAndPypiNames) {
  EXPECT_EQ(repository_identity("file:///srv/git/demo.git/"), "file:///srv/git/demo");
  EXPECT_TRUE(same_repository("file:///srv/git/demo", "file:///srv/git/./demo.git"));
  EXPECT_EQ(repository_identity("pypi:Torch_Scatter"), "pypi:torch-scatter");
  EXPECT_TRUE(same_repository("pypi:torch.scatter", "pypi:torch-scatter==2.1.2"));
  EXPECT_FALSE(same_repository("pypi:torch-scatter", "pypi:torch-sparse"));
}

TEST(RepositoryUrl, ProjectNames) {
  EXPECT_EQ(canonical_project_name("Torch__Scatter.Ext"), "torch-scatter-ext");
  EXPECT_TRUE(valid_project_name("torch_scatter"));
  EXPECT_TRUE(valid_project_name("a"));
  EXPECT_FALSE(valid_project_name(""));
  EXPECT_FALSE(valid_project_name("-lead"));
  EXPECT_FALSE(valid_project_name("trail."));
  EXPECT_FALSE(valid_project_name("has space"));
  EXPECT_FALSE(valid_project_name("../x"));
}

}  // namespace
}  // namespace archbuild
