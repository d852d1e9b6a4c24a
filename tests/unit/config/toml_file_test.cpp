#include "config/toml_file.h"

#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "core/error.h"
#include "test_support.h"

using namespace archbuild;

namespace {
size_t hazard_line(std::string_view text) {
  auto hazard = toml_hazard(text);
  return hazard ? hazard->line : 0;
}
}  // namespace

// Where toml++ 3.3.0 would reach __builtin_unreachable(): found by fuzz_toml
// (UBSan: "execution reached an unreachable program point"), first after a
// value and at a line's start, then inside what looks like a string but is
// the tail of a bare value toml++ scans (`x =0"/... U+FEFC`).
TEST(TomlFile, HazardIsTheFirstCharacterTomlPlusPlusCannotClassify) {
  auto hazard = toml_hazard("a = 1\nb = 2\n\xc3\xa9 = 1\n");
  ASSERT_TRUE(hazard);
  EXPECT_EQ(hazard->line, 3u);
  EXPECT_EQ(hazard->code_point, U'\u00e9');
  EXPECT_EQ(hazard_line("jobs = 1 \xc3\xa9\n"), 1u);
  EXPECT_EQ(hazard_line("a = [1, \xd0\x96]\n"), 1u);                 // U+0416
  EXPECT_EQ(hazard_line("a = 1 \xe3\x80\x81\n"), 1u);                // U+3001
  EXPECT_EQ(hazard_line("x =0\"/\x01\xef\xbb\xbc\"\n"), 1u);         // U+FEFC, the fuzzer's second
  EXPECT_EQ(hazard_line("d = \"\"\"\\\n  \xc2\xa7 x\"\"\"\n"), 2u);  // valid TOML, still refused
  EXPECT_EQ(hazard_line("# caf\xc3\xa9\n"), 1u);                     // comments and strings too
  EXPECT_EQ(hazard_line("cache_dir = \"/home/jos\xc3\xa9\"\n"), 1u);
}

TEST(TomlFile, OtherTextIsLeftToToml) {
  EXPECT_EQ(hazard_line("cache_dir = \"/home/jos\\u00e9\"\n"), 0u);  // the escape is the way to write it
  EXPECT_EQ(hazard_line("a = 1 \xe3\x80\x80\n"), 0u);                // U+3000: the table answers for it
  EXPECT_EQ(hazard_line("a = 1 \xe2\x9c\x93\n"), 0u);                // U+2713: outside the broken ranges
  EXPECT_EQ(hazard_line("a = 1 \xf0\x9f\x98\x80\n"), 0u);            // U+1F600
  EXPECT_EQ(hazard_line("\xef\xbb\xbf"
                        "a = 1\n"),
            0u);                             // a BOM
  EXPECT_EQ(hazard_line("a = 1 \xc3"), 0u);  // malformed UTF-8: toml++ refuses it itself
}

TEST(TomlFile, ParseReadsOnlyBoundedRegularFiles) {
  TempDir dir("archbuild-toml-file");
  write(dir.path / "ok.toml", "jobs = 2\nname = \"caf\\u00e9\"\n");
  EXPECT_EQ(parse_toml_file(dir.path / "ok.toml")["jobs"].value<int64_t>(), 2);
  write(dir.path / "hazard.toml", "jobs = 2\njobs2 = 1 \xc3\xa9\n");
  try {
    parse_toml_file(dir.path / "hazard.toml");
    ADD_FAILURE() << "accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("hazard.toml:2: U+00E9 cannot be read safely"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("write it as \\u00E9"), std::string::npos) << e.what();
  }
  write(dir.path / "big.toml", std::string(kMaxTomlFileBytes + 1, '#'));
  EXPECT_THROW(parse_toml_file(dir.path / "big.toml"), UserError);
  std::filesystem::create_symlink("/dev/zero", dir.path / "zero.toml");
  EXPECT_THROW(parse_toml_file(dir.path / "zero.toml"), UserError);
  ASSERT_EQ(mkfifo((dir.path / "fifo.toml").c_str(), 0600), 0);
  EXPECT_THROW(parse_toml_file(dir.path / "fifo.toml"), UserError);
  write(dir.path / "bad.toml", "jobs = = 2\n");
  EXPECT_THROW(parse_toml_file(dir.path / "bad.toml"), toml::parse_error);
}
