#include "source/pep440_version.h"

#include <random>
#include <regex>
#include <string>

#include <gtest/gtest.h>

using namespace archbuild;

namespace {
// The pattern archbuild used before (pip's reading of PEP 440), kept as the
// oracle: fine on short strings, a stack overflow on long ones.
bool regex_accepts(const std::string& text) {
  static const std::regex pep440(
      R"(v?([0-9]+!)?[0-9]+(\.[0-9]+)*([-_.]?(a|b|c|rc|alpha|beta|pre|preview)[-_.]?[0-9]*)?)"
      R"(((-[0-9]+)|([-_.]?(post|rev|r)[-_.]?[0-9]*))?([-_.]?dev[-_.]?[0-9]*)?(\+[a-z0-9]+([-_.][a-z0-9]+)*)?)",
      std::regex::icase);
  return std::regex_match(text, pep440);
}
}  // namespace

TEST(Pep440Version, RealVersions) {
  for (const char* good :
       {"1.0", "2.11.0", "v1.6.3", "1!2.0", "1.0a1", "1.0.rc2", "1.0-RC2", "1.0b", "1.0.post1", "1.0-1",
        "1.0.post1.dev3", "2.9.1+cu130.sm90", "1.0+local.7-x_y", "0.0.1.dev0", "1.0alpha", "1.0rev2", "1.0r"})
    EXPECT_TRUE(is_pep440_version(good)) << good;
  for (const char* bad : {"", "v", "1.", ".1", "1..0", "1.0+", "1.0+a..b", "1.0 ", "latest", "1.0-", "1.0+a_", "1!",
                          "!1.0", "1.0+cu130 sm90", "1.0\n"})
    EXPECT_FALSE(is_pep440_version(bad)) << bad;
}

TEST(Pep440Version, AgreesWithTheRegexOnShortStrings) {
  const std::string alphabet = "01.-_abcrevpostd+!xV";
  std::mt19937 random(7);
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    for (int n = random() % 12; n > 0; --n) text += alphabet[random() % alphabet.size()];
    EXPECT_EQ(is_pep440_version(text), regex_accepts(text)) << "'" << text << "'";
  }
}

TEST(Pep440Version, LongInputsAreRefusedQuickly) {
  std::string long_version = "1";
  for (int i = 0; i < 30000; ++i) long_version += ".1";  // 60,001 characters: the regex overflowed the stack
  EXPECT_FALSE(is_pep440_version(long_version));
  std::string at_cap = "1" + std::string(kMaxVersionLength - 1, '0');
  EXPECT_TRUE(is_pep440_version(at_cap));
  EXPECT_FALSE(is_pep440_version(at_cap + "0"));
}
