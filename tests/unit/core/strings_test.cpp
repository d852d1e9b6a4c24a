#include "core/strings.h"

#include <gtest/gtest.h>

using namespace archbuild;

TEST(Plan, ShellQuoting) {
  EXPECT_EQ(shell_quote("plain/path-1.0"), "plain/path-1.0");
  EXPECT_EQ(shell_quote("8.0;9.0+PTX"), "'8.0;9.0+PTX'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote(""), "''");
}

TEST(ShellSplit, SplitsWordsAsAShellDoes) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"pytest tests/test_x.py -k cuda", {"pytest", "tests/test_x.py", "-k", "cuda"}},
      {"  pytest   -k  'cuda and not slow' ", {"pytest", "-k", "cuda and not slow"}},
      {R"(a "b \"c\" d" e\ f)", {"a", R"(b "c" d)", "e f"}},
      {"''", {""}},
      {R"('a\b')", {R"(a\b)"}},
      {"", {}},
  };
  for (const auto& [text, words] : cases) EXPECT_EQ(archbuild::shell_split(text), words) << text;
  EXPECT_THROW(archbuild::shell_split("pytest -k 'cuda"), std::invalid_argument);
  EXPECT_THROW(archbuild::shell_split("a \"b"), std::invalid_argument);
}

namespace archbuild {
namespace {

TEST(LastLines, KeepsTheLastNonBlankLinesTrimmed) {
  EXPECT_EQ(last_lines("one\n\n  two  \nthree\n\n", 2), "two | three");
  EXPECT_EQ(last_lines("one\ntwo\n", 5, "\n"), "one\ntwo");
  EXPECT_EQ(last_lines("", 3), "");
  EXPECT_EQ(last_lines("a\nb\n", 0), "");
}

}  // namespace
}  // namespace archbuild
