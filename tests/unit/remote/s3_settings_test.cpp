#include "remote/s3_settings.h"

#include <gtest/gtest.h>

#include "remote/fake_environment.h"
#include "test_support.h"

using namespace archbuild;

TEST(S3Location, ParsesAndRefuses) {
  auto location = parse_s3_location("s3://team-wheels/nightly/cu130/");
  EXPECT_EQ(location.bucket, "team-wheels");
  EXPECT_EQ(location.prefix, "nightly/cu130");
  EXPECT_EQ(location.key("simple/index.html"), "nightly/cu130/simple/index.html");
  EXPECT_EQ(parse_s3_location("s3://abc").key("x"), "x");
  for (const char* bad : {"s3://Ab/x", "s3://a/x", "s3://-ab/x", "s3://a_b/x"})
    EXPECT_NE(error_of([&] { parse_s3_location(bad); }).find("bucket name"), std::string::npos) << bad;
  for (const char* bad : {"s3://abc/x/../y", "s3://abc//x", "s3://abc/./x"})
    EXPECT_NE(error_of([&] { parse_s3_location(bad); }).find("segment"), std::string::npos) << bad;
}

TEST(S3SettingsTest, EnvironmentFirstThenTheProfileInTheFiles) {
  TempDir dir;
  write(dir.path / "config",
        "[default]\nregion = eu-west-1\n\n[profile ci]\nregion = eu-central-1\nendpoint_url = http://minio:9000/\n"
        "s3 =\n  addressing_style = path\n");
  write(dir.path / "credentials", "[ci]\naws_access_key_id = AKCI\naws_secret_access_key = SECRETCI\n");
  std::map<std::string, std::string> values = {{"AWS_CONFIG_FILE", (dir.path / "config").string()},
                                               {"AWS_SHARED_CREDENTIALS_FILE", (dir.path / "credentials").string()},
                                               {"AWS_PROFILE", "ci"}};
  auto from_files = resolve_s3_settings(fake_environment(values));
  EXPECT_EQ(from_files.endpoint, "http://minio:9000");
  EXPECT_EQ(from_files.region, "eu-central-1");
  EXPECT_TRUE(from_files.path_style);
  EXPECT_EQ(from_files.access_key, "AKCI");
  EXPECT_EQ(from_files.credentials_from, (dir.path / "credentials").string() + ":2");
  EXPECT_EQ(s3_object_url(from_files, parse_s3_location("s3://bkt/p"), "p/torch-2.9.1+cu130.whl"),
            "http://minio:9000/bkt/p/torch-2.9.1%2Bcu130.whl");

  values.insert({{"AWS_ACCESS_KEY_ID", "AKENV"},
                 {"AWS_SECRET_ACCESS_KEY", "SECRETENV"},
                 {"AWS_REGION", "us-west-2"},
                 {"AWS_ENDPOINT_URL_S3", "https://s3.example.com"}});
  auto from_env = resolve_s3_settings(fake_environment(values));
  EXPECT_EQ(from_env.access_key, "AKENV");
  EXPECT_EQ(from_env.credentials_from, "environment");
  EXPECT_EQ(from_env.region, "us-west-2");
  EXPECT_EQ(from_env.endpoint, "https://s3.example.com");

  // No endpoint: AWS's own, virtual-host style.
  auto aws = resolve_s3_settings(
      fake_environment({{"AWS_ACCESS_KEY_ID", "a"}, {"AWS_SECRET_ACCESS_KEY", "b"}, {"HOME", dir.path.string()}}));
  EXPECT_EQ(aws.region, "us-east-1");
  EXPECT_FALSE(aws.path_style);
  EXPECT_EQ(s3_bucket_url(aws, parse_s3_location("s3://team/x")), "https://team.s3.us-east-1.amazonaws.com");
}

TEST(S3SettingsTest, RefusesWhatCannotWork) {
  TempDir dir;
  auto message = error_of([&] { resolve_s3_settings(fake_environment({{"HOME", dir.path.string()}})); });
  EXPECT_NE(message.find("no S3 credentials"), std::string::npos) << message;
  message = error_of([&] {
    resolve_s3_settings(fake_environment({{"AWS_ACCESS_KEY_ID", "a"},
                                          {"AWS_SECRET_ACCESS_KEY", "b"},
                                          {"AWS_ENDPOINT_URL", "minio:9000"},
                                          {"HOME", dir.path.string()}}));
  });
  EXPECT_NE(message.find("AWS_ENDPOINT_URL"), std::string::npos) << message;
  write(dir.path / ".aws" / "config", "[default]\nregion = x\n  indented continues\nnot a key\n");
  message = error_of([&] {
    resolve_s3_settings(
        fake_environment({{"AWS_ACCESS_KEY_ID", "a"}, {"AWS_SECRET_ACCESS_KEY", "b"}, {"HOME", dir.path.string()}}));
  });
  EXPECT_NE(message.find("config:4"), std::string::npos) << message;
  write(dir.path / ".aws" / "config", "[default]\nregion = eu west 1\n");
  message = error_of([&] {
    resolve_s3_settings(
        fake_environment({{"AWS_ACCESS_KEY_ID", "a"}, {"AWS_SECRET_ACCESS_KEY", "b"}, {"HOME", dir.path.string()}}));
  });
  EXPECT_NE(message.find("'eu west 1' (from " + (dir.path / ".aws" / "config").string() + ":2"), std::string::npos)
      << message;
}
