#include "builder/build_requirements.h"

#include <gtest/gtest.h>

#include "test_support.h"

using namespace archbuild;

TEST(BuildRequirements, FromTheRecipeARequirementsFileAndPyproject) {
  TempDir tree;
  write(tree.path / "requirements-build.txt",
        "# comment\nsetuptools>=70.1.0,<82  # trailing\n\n-r requirements.txt\ncmake>=3.27\ntorch>=2.9\n");
  write(tree.path / "pyproject.toml",
        "[build-system]\nrequires = [\"scikit-build-core>=1.0\", \"cmake>=3.27\", \"Torch==2.14.0\"]\n");
  BuildStep build;
  build.requires_list = {"ninja", "cmake>=3.27"};
  build.requires_from = {"requirements-build.txt", "pyproject.toml", "absent.txt"};
  std::vector<std::string> notes;
  auto found = collect_build_requirements(build, tree.path, {"torch"}, notes);
  // in order, each once; torch comes from the dependency env
  EXPECT_EQ(found,
            (std::vector<std::string>{"ninja", "cmake>=3.27", "setuptools>=70.1.0,<82", "scikit-build-core>=1.0"}));
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0], "requirements-build.txt:4: '-r requirements.txt' is a pip option, not followed");
  EXPECT_EQ(notes[1], "absent.txt: not in this ref's tree, no requirements taken from it");
}

TEST(BuildRequirements, ABadFileIsNamed) {
  TempDir tree;
  write(tree.path / "pyproject.toml", "[build-system]\nrequires = [1]\n");
  BuildStep build;
  build.requires_from = {"pyproject.toml"};
  std::vector<std::string> notes;
  auto error = error_of([&] { collect_build_requirements(build, tree.path, {}, notes); });
  EXPECT_NE(error.find("pyproject.toml: [build-system] requires holds a value that is not a string"), std::string::npos)
      << error;
  std::filesystem::create_directory(tree.path / "dir.txt");
  build.requires_from = {"dir.txt"};
  error = error_of([&] { collect_build_requirements(build, tree.path, {}, notes); });
  EXPECT_NE(error.find("dir.txt (build.requires_from)"), std::string::npos) << error;
}
