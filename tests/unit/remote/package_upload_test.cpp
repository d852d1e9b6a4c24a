#include "remote/package_upload.h"

#include <gtest/gtest.h>

#include "remote/fake_environment.h"
#include "test_support.h"

using namespace archbuild;

TEST(PackageUpload, MetadataFieldsAsTwineSendsThem) {
  auto fields = upload_metadata_fields(
      "Metadata-Version: 2.1\nName: fixture\nVersion: 1.0+cu130.sm90\nSummary: a\n  longer summary\n"
      "Requires-Dist: numpy\nRequires-Dist: torch==2.9.1\nClassifier: A :: B\nX-Private: no\n\nThe description.\n"
      "Name: not-a-header\n");
  std::vector<std::pair<std::string, std::string>> expected = {
      {"metadata_version", "2.1"},      {"name", "fixture"},        {"version", "1.0+cu130.sm90"},
      {"summary", "a\nlonger summary"}, {"requires_dist", "numpy"}, {"requires_dist", "torch==2.9.1"},
      {"classifiers", "A :: B"}};
  EXPECT_EQ(fields, expected);
}

TEST(PackageUpload, CredentialsAsTwineTakesThem) {
  TempDir home;
  write(home.path / ".pypirc",
        "[distutils]\nindex-servers =\n    internal\n    other\n\n[internal]\nrepository: https://pkgs.example/up/\n"
        "username: alice\npassword: from-file\n\n[other]\nrepository = https://other.example/\n");
  auto by_url = resolve_upload_target("https://pkgs.example/up", "", fake_environment({{"HOME", home.path.string()}}));
  EXPECT_EQ(by_url.url, "https://pkgs.example/up/");
  EXPECT_EQ(by_url.username, "alice");
  EXPECT_EQ(by_url.password, "from-file");
  EXPECT_EQ(by_url.credentials_from, (home.path / ".pypirc").string() + " [internal]");
  EXPECT_EQ(by_url.password_from, by_url.credentials_from);
  auto by_name =
      resolve_upload_target("", "internal",
                            fake_environment({{"HOME", home.path.string()}, {"TWINE_PASSWORD", "from-env"}}));
  EXPECT_EQ(by_name.url, "https://pkgs.example/up/");
  EXPECT_EQ(by_name.password, "from-env");
  EXPECT_EQ(by_name.password_from, "TWINE_PASSWORD");
  auto anonymous = resolve_upload_target("https://other.example", "", fake_environment({{"HOME", home.path.string()}}));
  EXPECT_TRUE(anonymous.username.empty());
  EXPECT_NE(error_of([&] {
              resolve_upload_target("", "", fake_environment({{"HOME", home.path.string()}}));
            }).find("--repository-url"),
            std::string::npos);
  EXPECT_NE(error_of([&] { resolve_upload_target("ftp://x", "", fake_environment({})); }).find("not a plain http"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              resolve_upload_target("", "missing", fake_environment({{"HOME", home.path.string()}}));
            }).find("[missing]"),
            std::string::npos);
}

TEST(PackageUpload, URLsThatCarryCredentialsOrMoreThanAURLAreRefusedWithoutThePassword) {
  auto message = error_of([] { resolve_upload_target("http://bob:S3cretPass@host/", "", fake_environment({})); });
  EXPECT_NE(message.find("carries credentials"), std::string::npos) << message;
  EXPECT_EQ(message.find("S3cretPass"), std::string::npos) << message;
  EXPECT_NE(error_of([] {
              check_http_url("https://ok\nindex-url = http://evil", "--public-url");
            }).find("--public-url"),
            std::string::npos);
  EXPECT_NE(error_of([] { check_http_url("https://a/\"b", "--public-url"); }).find("not a plain"), std::string::npos);
  check_http_url("https://wheels.internal:8080/cu130/simple", "--public-url");
}

TEST(PackageUpload, ServerErrorSummaries) {
  EXPECT_EQ(http_error_summary({403, "<Error><Code>AccessDenied</Code><Message>Access Denied.</Message></Error>", {}}),
            "AccessDenied: Access Denied.");
  EXPECT_EQ(http_error_summary({404, "<html><head><title>404 cannot submit to mirror index</title></head></html>", {}}),
            "404 cannot submit to mirror index");
  EXPECT_EQ(http_error_summary({500, "plain\ntext", {}}), "plain text");
  EXPECT_EQ(http_error_summary({502, "", {}}), "no explanation in the answer");
}
