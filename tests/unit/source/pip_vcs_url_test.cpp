#include "source/pip_vcs_url.h"

#include <gtest/gtest.h>

#include "test_support.h"

using namespace archbuild;

TEST(PipVcsUrl, ReadsRefAndSubdirectoryAsPipDoes) {
  auto url = parse_pip_vcs_url("git+https://github.com/owner/repo@v1.2#subdirectory=python/pkg");
  EXPECT_EQ(url.url, "https://github.com/owner/repo");
  EXPECT_EQ(url.ref, "v1.2");
  EXPECT_EQ(url.subdirectory, "python/pkg");

  url = parse_pip_vcs_url("git+ssh://git@github.com/owner/repo.git#egg=pkg&subdirectory=lib/");
  EXPECT_EQ(url.url, "ssh://git@github.com/owner/repo.git");  // the user name's '@' is no ref
  EXPECT_EQ(url.ref, "");
  EXPECT_EQ(url.subdirectory, "lib");
  EXPECT_EQ(url.egg, "pkg");

  url = parse_pip_vcs_url("git+file:///srv/git/repo@0123abcd#subdirectory=a%20b");
  EXPECT_EQ(url.url, "file:///srv/git/repo");
  EXPECT_EQ(url.ref, "0123abcd");
  EXPECT_EQ(url.subdirectory, "a b");

  EXPECT_EQ(parse_pip_vcs_url("git+https://host/o/r").ref, "");
}

TEST(PipVcsUrl, RefusesWhatPipWouldNotBuildHere) {
  EXPECT_NE(error_of([] { parse_pip_vcs_url("hg+https://host/o/r"); }).find("another version control system"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_pip_vcs_url("git+ftp://host/o/r"); }).find("not a scheme pip takes"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_pip_vcs_url("git+https://host/o/r@"); }).find("nothing after '@'"), std::string::npos);
  EXPECT_NE(error_of([] { parse_pip_vcs_url("git+https://host/o/r#subdirectory=../x"); }).find("climbs out"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_pip_vcs_url("git+https://host/o/r#subdirectory=/etc"); }).find("absolute"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_pip_vcs_url("git+https://host/o/r#branch=x"); }).find("unknown fragment key"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_pip_vcs_url("git+https://host/o/r#subdirectory="); }).find("is empty"),
            std::string::npos);
  EXPECT_NE(error_of([] { checked_subdirectory("a/.git", "--subdirectory"); }).find("--subdirectory 'a/.git'"),
            std::string::npos);
  EXPECT_EQ(checked_subdirectory("a/b/", "--subdirectory"), "a/b");
}
