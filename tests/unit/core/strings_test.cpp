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

TEST(Strings, PrintableTextCannotDriveTheTerminalOrForgeALine) {
  EXPECT_EQ(printable("AccessDenied: \x1b]0;owned\x07\x1b[2J\rarchbuild: pushed 3 entries, all fine\n"),
            "AccessDenied: \\x1b]0;owned\\x07\\x1b[2J\\x0darchbuild: pushed 3 entries, all fine\\x0a");
  EXPECT_EQ(printable("caf\xc3\xa9 \xc2\x9b"
                      "2J"),
            "caf\xc3\xa9 \\xc2\\x9b"
            "2J");  // UTF-8 kept, C1 CSI not
  EXPECT_EQ(printable("plain text"), "plain text");
}

TEST(Strings, TerminalSafeKeepsColourNewlinesAndTabsOnly) {
  EXPECT_EQ(terminal_safe("\x1b[1;32mok\x1b[0m\tnext\n"), "\x1b[1;32mok\x1b[0m\tnext\n");
  EXPECT_EQ(terminal_safe("\x1b[2Jx\rforged\x1b]0;t\x07"), "\\x1b[2Jx\\x0dforged\\x1b]0;t\\x07");
}

TEST(Strings, PercentDecodingRejectsMalformedEscapes) {
  EXPECT_EQ(percent_decode("torch-2.9.1%2Bcu130.sm90-cp311.whl"), "torch-2.9.1+cu130.sm90-cp311.whl");
  EXPECT_EQ(percent_decode("a%2fb%41"), "a/bA");
  EXPECT_EQ(percent_decode("plain"), "plain");
  EXPECT_FALSE(percent_decode("x%zz.whl"));
  EXPECT_FALSE(percent_decode("x%4"));
  EXPECT_FALSE(percent_decode("x%"));
  EXPECT_FALSE(percent_decode("x%00.whl"));
}

}  // namespace
}  // namespace archbuild
