#include "config/ini_file.h"

#include <gtest/gtest.h>

#include "test_support.h"

using namespace archbuild;

TEST(IniFileTest, ReadsConfigparserAndAwsFiles) {
  auto ini = IniFile::parse(
      "# comment\n[distutils]\nindex-servers =\n    local\n    pypi\n\n[local]\nrepository: http://h/\nUserName = a\n"
      "; another\n[profile ci]\ns3 =\n  addressing_style = path\n",
      "F");
  EXPECT_EQ(ini.get("distutils", "index-servers"), "local\npypi");
  EXPECT_EQ(ini.get("local", "repository"), "http://h/");
  EXPECT_EQ(ini.get("local", "username"), "a");  // keys are case-insensitive, as in configparser
  EXPECT_EQ(ini.get("profile ci", "s3"), "addressing_style = path");
  EXPECT_FALSE(ini.get("local", "password"));
  EXPECT_FALSE(ini.get("nowhere", "x"));
  EXPECT_EQ(ini.where("local", "repository"), "F:8");
  EXPECT_FALSE(IniFile::load("/nonexistent/file"));
}

TEST(IniFileTest, NamesTheLineItCannotRead) {
  EXPECT_NE(error_of([] { IniFile::parse("key = outside\n", "F"); }).find("F:1"), std::string::npos);
  EXPECT_NE(error_of([] { IniFile::parse("[a\n", "F"); }).find("F:1"), std::string::npos);
  EXPECT_NE(error_of([] { IniFile::parse("[a]\nx = 1\nno separator\n", "F"); }).find("F:3"), std::string::npos);
  EXPECT_NE(error_of([] { IniFile::parse("  indented first\n", "F"); }).find("F:1"), std::string::npos);
}

TEST(IniFileTest, ASectionOrKeyGivenTwiceIsRefusedAsConfigparserDoes) {
  const auto section = error_of([] { IniFile::parse("[local]\nusername = a\n[pypi]\n[local]\npassword = b\n", "F"); });
  EXPECT_NE(section.find("F:4"), std::string::npos) << section;
  EXPECT_NE(section.find("first at line 1"), std::string::npos) << section;
  const auto key = error_of([] { IniFile::parse("[local]\npassword = a\nPassword = b\n", "F"); });
  EXPECT_NE(key.find("F:3"), std::string::npos) << key;
  EXPECT_NE(key.find("'password'"), std::string::npos) << key;
}
