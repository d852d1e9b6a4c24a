#include "core/secrets.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include "core/cache_layout.h"
#include "core/error.h"
#include "core/regular_file.h"
#include "test_support.h"

namespace archbuild {
namespace {

TEST(Secrets, NamesThatHoldSecretsAndNamesTheUserMarks) {
  for (const char* name : {"HF_TOKEN", "aws_secret_access_key", "PIP_PASSWORD", "SIGNING_KEY", "NPM_AUTH",
                           "GOOGLE_APPLICATION_CREDENTIALS", "OAUTH_CLIENT", "db_passwd"})
    EXPECT_TRUE(secrets::is_secret_name(name)) << name;
  for (const char* name : {"PATH", "GIT_AUTHOR_NAME", "CUDA_HOME", "PIP_INDEX_URL", "MY_SITE_VALUE"})
    EXPECT_FALSE(secrets::is_secret_name(name)) << name;
  secrets::mark_secret_name("my_site_value");
  EXPECT_TRUE(secrets::is_secret_name("MY_SITE_VALUE"));
}

TEST(Secrets, UrlUserinfoIsScrubbedWhateverThePasswordHolds) {
  EXPECT_EQ(secrets::scrub("a https://u:p@h/x and redis://:pw@cache:6379 b"),
            "a https://***@h/x and redis://***@cache:6379 b");
  // '/', '?', '#' and '@' in a password: people do not percent-encode them
  EXPECT_EQ(secrets::scrub("https://user:pa/ss@host/simple"), "https://***@host/simple");
  EXPECT_EQ(secrets::scrub("GET https://u:p?x#y@host/ failed"), "GET https://***@host/ failed");
  EXPECT_EQ(secrets::scrub("'https://u:a@b/c@host/'"), "'https://***@host/'");
  EXPECT_EQ(secrets::scrub("https://ghp_token@github.com/o/r.git"), "https://***@github.com/o/r.git");
  for (const std::string unchanged :
       {"https://github.com/pytorch/pytorch.git", "file:///srv/mirrors/x", "git@github.com:pytorch/pytorch.git",
        "https://h/path@v1", "git+https://github.com/o/r@main#subdirectory=x", "https://h:8080/simple", "no url"})
    EXPECT_EQ(secrets::scrub(unchanged), unchanged);
}

TEST(Secrets, RememberedValuesAreScrubbedFromAnyText) {
  secrets::remember("kr-0a9f3c-planted");
  secrets::remember("abc");  // too short to tell from ordinary text: the URL and name rules cover it
  EXPECT_EQ(secrets::scrub("keyring said kr-0a9f3c-planted twice: kr-0a9f3c-planted"),
            "keyring said <redacted> twice: <redacted>");
  EXPECT_EQ(secrets::scrub("abc"), "abc");
  secrets::remember_url_userinfo("https://ci:p%2Fss-planted@host/simple");
  EXPECT_EQ(secrets::scrub("the server echoed p/ss-planted and p%2Fss-planted"),
            "the server echoed <redacted> and <redacted>");
}

TEST(Secrets, RecordedValuesAreKeyedDigestsThatFollowTheSecret) {
  TempDir dir;
  secrets::use_cache_secret(dir.path / "cache");
  const auto file = CacheLayout(dir.path / "cache").secret_key();
  struct stat info {};
  ASSERT_EQ(::stat(file.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0400u);

  const auto token = secrets::recorded_value("HF_TOKEN", "hf_one");
  EXPECT_TRUE(token.starts_with("<secret sha256:")) << token;
  EXPECT_EQ(token.find("hf_one"), std::string::npos);
  EXPECT_EQ(secrets::recorded_value("HF_TOKEN", "hf_one"), token);  // the same secret, the same key
  EXPECT_NE(secrets::recorded_value("HF_TOKEN", "hf_two"), token);  // another secret, another key
  EXPECT_NE(token, "<secret sha256:" + std::string(64, '0') + ">");

  const auto index = secrets::recorded_value("PIP_EXTRA_INDEX_URL", "https://ci:pw-planted@host/simple");
  EXPECT_TRUE(index.starts_with("https://<secret sha256:")) << index;
  EXPECT_TRUE(index.ends_with(">@host/simple")) << index;
  EXPECT_EQ(index.find("pw-planted"), std::string::npos);
  EXPECT_EQ(secrets::recorded_value("CUDA_VISIBLE_DEVICES", "0,1"), "0,1");

  // Another cache, another secret: its digests cannot be matched with these.
  secrets::use_cache_secret(dir.path / "other");
  EXPECT_NE(secrets::recorded_value("HF_TOKEN", "hf_one"), token);
  // The first cache's secret is kept, not made again.
  secrets::use_cache_secret(dir.path / "cache");
  EXPECT_EQ(secrets::recorded_value("HF_TOKEN", "hf_one"), token);
}

TEST(Secrets, ACacheSecretArchbuildDidNotMakeIsRefused) {
  TempDir dir;
  std::filesystem::create_directories(dir.path / "cache");
  write_whole_file(CacheLayout(dir.path / "cache").secret_key(), "short\n");
  EXPECT_THROW(secrets::use_cache_secret(dir.path / "cache"), UserError);
}

}  // namespace
}  // namespace archbuild
