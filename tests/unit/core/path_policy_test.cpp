#include "core/path_policy.h"

#include <string>
#include <string_view>

#include <gtest/gtest.h>

using namespace archbuild;

namespace {

constexpr std::string_view kNotNormalised = "is not normalised";

struct Case {
  std::string_view path;
  std::string_view problem;  // "" for a path inside the tree; else how the reason starts
};

}  // namespace

TEST(RelativePathProblem, OneRuleForEveryPathInsideATree) {
  using namespace std::string_view_literals;
  const Case cases[] = {
      {"build", ""},
      {"src/a.c", ""},
      {"nvidia/nccl", ""},
      {"third_party/sub", ""},
      {"a..b/c.d", ""},  // '..' only as a whole component
      {"...", ""},
      {".github/x", ""},
      {".gitignore", ""},
      {"sub/.gitmodules", ""},
      {"git", ""},
      {"dir with spaces/f", ""},
      {"", "is empty"},
      {"/abs", "is an absolute path"},
      {"/", "is an absolute path"},
      {"..", "climbs out with '..'"},
      {"../victim", "climbs out with '..'"},
      {"a/../b", "climbs out with '..'"},  // even one that comes back
      {"a/../../victim", "climbs out with '..'"},
      {"a/..", "climbs out with '..'"},
      {".", kNotNormalised},  // the tree itself
      {"./x", kNotNormalised},
      {"x/.", kNotNormalised},
      {"a//b", kNotNormalised},
      {"a/", kNotNormalised},
      {".git", "goes into .git"},
      {".GIT", "goes into .git"},
      {".Git/config", "goes into .git"},
      {"GIT~1/config", "goes into .git"},
      {"pkg/.git./hooks/x", "goes into .git"},
      {".git . /x", "goes into .git"},
      {".git/config", "goes into .git"},
      {"sub/.git/config", "goes into .git"},
      {"sub/.git", "goes into .git"},
      {"a\\b", "holds a backslash"},
      {"..\\victim", "holds a backslash"},
      {"a\nb", "holds a control character"},
      {"a\tb", "holds a control character"},
      {"a\x7f", "holds a control character"},
      {"a\x1b[2J", "holds a control character"},
      {"a\0b"sv, "holds a NUL byte"},
  };
  for (const auto& [path, problem] : cases) {
    const auto got = relative_path_problem(path);
    if (problem.empty())
      EXPECT_EQ(got, "") << "'" << path << "'";
    else
      EXPECT_TRUE(got.starts_with(problem)) << "'" << path << "': " << got;
  }
}
