#include "source/source_tree.h"

#include <gtest/gtest.h>

using namespace archbuild;

namespace {

SourceTree manifest_with(const std::string& submodule, const std::string& created) {
  SourceTree tree;
  tree.submodules.push_back({submodule, "file:///x", "abc"});
  tree.patches.push_back({"fix.patch", "--patch", "00", {created}});
  return tree;
}

}  // namespace

TEST(SourceManifest, PathsReadBackMustStayInsideTheTree) {
  EXPECT_EQ(source_manifest_problem(manifest_with("third_party/sub", "src/new.c")), "");
  EXPECT_EQ(source_manifest_problem(manifest_with("../victim", "src/new.c")),
            "submodule path '../victim' climbs out with '..'");
  EXPECT_EQ(source_manifest_problem(manifest_with("/srv/victim", "src/new.c")),
            "submodule path '/srv/victim' is an absolute path");
  EXPECT_NE(source_manifest_problem(manifest_with("third_party//sub", "src/new.c")), "");
  EXPECT_NE(source_manifest_problem(manifest_with("", "src/new.c")), "");
  EXPECT_EQ(source_manifest_problem(manifest_with("third_party/sub", "../../etc/passwd")),
            "path '../../etc/passwd' created by patch fix.patch climbs out with '..'");
  EXPECT_EQ(source_manifest_problem(manifest_with("third_party/sub", ".git/config")),
            "path '.git/config' created by patch fix.patch goes into .git");
}

TEST(SourceManifest, RoundTripsThroughJson) {
  auto tree = manifest_with("third_party/sub", "src/new.c");
  tree.commit = "abc";
  auto back = SourceTree::from_json(tree.to_json());
  ASSERT_EQ(back.submodules.size(), 1u);
  EXPECT_EQ(back.submodules[0].path, "third_party/sub");
  ASSERT_EQ(back.patches.size(), 1u);
  EXPECT_EQ(back.patches[0].created, std::vector<std::string>{"src/new.c"});
  EXPECT_EQ(source_manifest_problem(back), "");
}
