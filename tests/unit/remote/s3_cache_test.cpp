#include "remote/s3_cache.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include "cache/build_report.h"
#include "cache/simple_index.h"
#include "core/json_text.h"
#include "core/system_info.h"
#include "remote/fake_s3.h"
#include "remote/remote_lock.h"
#include "test_support.h"
#include "wheel/wheel_test_support.h"

using namespace archbuild;

namespace {

const std::string kKeyText = "cache_format 2\n";
const std::string kKeyHash = sha256_hex(kKeyText);

const std::string kVariantWheel = "demo-1.0-py3-none-any-0123abcd.whl";

WheelStore source_cache(const std::filesystem::path& root, const std::string& key_text = kKeyText,
                        bool with_variant = false) {
  std::filesystem::create_directories(root / "build");
  const auto wheel = write_minimal_wheel(root / "build", "demo", "py3-none-any");
  BuildReport manifest;
  manifest.wheels = {ReportedWheel::of(wheel)};
  manifest.local_version_label = "cu130.sm90";
  std::vector<std::filesystem::path> variants;
  if (with_variant) {
    variants.push_back(root / "build" / kVariantWheel);
    std::filesystem::copy_file(wheel, variants[0], std::filesystem::copy_options::overwrite_existing);
    write_whole_file(variants[0].string() + ".json", R"({"variants": {"0123abcd": {}}})");
  }
  WheelStore store(root / "cache");
  store.publish({key_text, sha256_hex(key_text)}, {wheel}, json_text(manifest.to_json()), {}, variants);
  return store;
}

S3Settings settings() {
  S3Settings settings;
  settings.endpoint = "http://127.0.0.1:1";
  settings.region = "us-east-1";
  settings.access_key = "k";
  settings.secret_key = "s";
  settings.credentials_from = "test";
  return settings;
}

// A source cache of one entry and an empty in-memory bucket, s3://bkt/p.
class S3Cache : public ::testing::Test {
 protected:
  TempDir dir;
  WheelStore from = source_cache(dir.path);
  FakeS3 s3;
  S3Client bucket{settings(), parse_s3_location("s3://bkt/p"), s3};

  // The code and message of the UserError a push ends with (a failure when it does not).
  std::pair<ExitCode, std::string> refusal() {
    try {
      push_to_s3(from, bucket, {});
    } catch (const UserError& error) {
      return {error.code(), error.what()};
    }
    ADD_FAILURE() << "pushed";
    return {ExitCode::success, ""};
  }
};

}  // namespace

TEST_F(S3Cache, PushWritesKeyLastListsAndFindsItThereAgain) {
  std::vector<std::string> order;
  s3.before_put = [&](const std::string& key) { order.push_back(key); };
  auto result = push_to_s3(from, bucket, {});
  EXPECT_EQ(result.pushed, std::vector<std::string>{kKeyHash});
  EXPECT_EQ(result.listed_wheels, 1u);
  // The entry's key.txt comes after every other object of it, and every page after the key.
  auto position = [&](const std::string& suffix) {
    for (size_t i = 0; i < order.size(); ++i)
      if (order[i].ends_with(suffix)) return i;
    return order.size();
  };
  EXPECT_LT(position("manifest.json"), position("key.txt"));
  EXPECT_LT(position(".whl"), position("key.txt"));
  EXPECT_LT(position("key.txt"), position("simple/demo/index.html"));
  EXPECT_LT(position("simple/demo/index.html"), position("simple/index.html"));
  const auto page = s3.objects.at("bkt/p/simple/demo/index.html").body;
  EXPECT_NE(page.find("../../store/" + kKeyHash + "/wheels/demo-"), std::string::npos) << page;
  EXPECT_EQ(s3.objects.count("bkt/p/locks/" + kKeyHash), 0u);  // released

  auto again = push_to_s3(from, bucket, {});
  EXPECT_EQ(again.present, std::vector<std::string>{kKeyHash});
}

TEST_F(S3Cache, APageChangedBetweenReadAndWriteIsReadAgainAndNoLinkIsLost) {
  // Another pusher writes the page just before ours would: our write must fail its If-Match and retry.
  bool raced = false;
  s3.before_put = [&](const std::string& key) {
    if (key == "bkt/p/simple/demo/index.html" && !raced) {
      raced = true;
      s3.set(key, project_page_html("demo", {{"../../store/other/wheels/demo-2.0-py3-none-any.whl",
                                              std::string(64, 'a'), "demo-2.0-py3-none-any.whl"}}));
    }
  };
  push_to_s3(from, bucket, {});
  const auto page = s3.objects.at("bkt/p/simple/demo/index.html").body;
  EXPECT_TRUE(raced);
  EXPECT_NE(page.find("demo-2.0-py3-none-any.whl"), std::string::npos) << page;
  EXPECT_NE(page.find("store/" + kKeyHash), std::string::npos) << page;
}

TEST_F(S3Cache, ADamagedEntryInTheBucketIsUploadedAgain) {
  push_to_s3(from, bucket, {});
  // Another tool replaces the wheel after the entry was committed.
  for (auto& [key, object] : s3.objects)
    if (key.ends_with(".whl")) {
      s3.set(key, object.body);
      object.sha256 = std::string(64, '0');
    }
  auto result = push_to_s3(from, bucket, {});
  EXPECT_EQ(result.repaired, std::vector<std::string>{kKeyHash});
  ASSERT_EQ(result.repairs.size(), 1u);
  EXPECT_NE(result.repairs[0].find("sha256 differs"), std::string::npos);
}

TEST_F(S3Cache, AnEntryThereAndListedIsConfirmedFromOneListingAndLeftAsItIs) {
  push_to_s3(from, bucket, {});
  const auto before = s3.objects;
  const int puts = s3.puts;
  s3.requests = 0;
  std::vector<std::string> written;
  s3.before_put = [&](const std::string& key) { written.push_back(key); };
  auto again = push_to_s3(from, bucket, {});
  EXPECT_EQ(again.present, std::vector<std::string>{kKeyHash});
  EXPECT_EQ(again.listed_wheels, 1u);
  // The marker's two refused conditional writes only: no lock, no page.
  EXPECT_EQ(s3.puts - puts, 2);
  for (const auto& key : written) EXPECT_TRUE(key.ends_with(".archbuild-cache")) << key;
  EXPECT_EQ(s3.objects.size(), before.size());
  for (const auto& [key, object] : before) EXPECT_EQ(s3.objects.at(key).modified, object.modified) << key;
  // The marker (GET and two PUTs), the entry's listing, its page and the root page.
  EXPECT_LE(s3.requests, 6);
}

TEST_F(S3Cache, AnEntryThereButNotListedIsListedAgain) {
  push_to_s3(from, bucket, {});
  // A push killed after key.txt, before its links: the page and the root page lack it.
  s3.objects.erase("bkt/p/simple/demo/index.html");
  s3.set("bkt/p/simple/index.html", root_page_html({}));
  auto again = push_to_s3(from, bucket, {});
  EXPECT_EQ(again.present, std::vector<std::string>{kKeyHash});
  ASSERT_EQ(s3.objects.count("bkt/p/simple/demo/index.html"), 1u);
  EXPECT_NE(s3.objects.at("bkt/p/simple/demo/index.html").body.find("store/" + kKeyHash), std::string::npos);
  EXPECT_NE(s3.objects.at("bkt/p/simple/index.html").body.find("demo/"), std::string::npos);
}

TEST_F(S3Cache, AFileNameTwoEntriesShareStaysLinkedToTheNewerOnEveryPush) {
  const std::string newer_text = "cache_format 2\nnewer 1\n";
  source_cache(dir.path, newer_text);
  for (const auto& entry : from.entries())  // newer by a clear margin, whatever the file system's clock
    if (entry.hash == sha256_hex(newer_text))
      std::filesystem::last_write_time(entry.dir / "manifest.json",
                                       std::filesystem::file_time_type::clock::now() + std::chrono::seconds(10));
  EXPECT_EQ(push_to_s3(from, bucket, {}).pushed.size(), 2u);
  const auto page_link = [&] { return s3.objects.at("bkt/p/simple/demo/index.html").body; };
  EXPECT_NE(page_link().find("store/" + sha256_hex(newer_text)), std::string::npos) << page_link();
  const int puts = s3.puts;
  auto again = push_to_s3(from, bucket, {});
  EXPECT_EQ(again.present.size(), 2u);
  EXPECT_EQ(s3.puts - puts, 2);  // the marker's checks only
  // The older entry's link taken over by a third pusher: this push links the newer entry again.
  s3.set("bkt/p/simple/demo/index.html",
         project_page_html("demo", {{"../../store/" + kKeyHash + "/wheels/demo-1.0-py3-none-any.whl",
                                     std::string(64, 'a'), "demo-1.0-py3-none-any.whl"}}));
  push_to_s3(from, bucket, {});
  EXPECT_NE(page_link().find("store/" + sha256_hex(newer_text)), std::string::npos) << page_link();
}

TEST_F(S3Cache, AVariantsDocumentLeftStaleIsSettledAgain) {
  const std::string text = "cache_format 2\nvariant 1\n";
  source_cache(dir.path, text, true);
  push_to_s3(from, bucket, {});
  const auto document_key = "bkt/p/simple/demo/demo-1.0-variants.json";
  ASSERT_EQ(s3.objects.count(document_key), 1u);
  const int puts = s3.puts;
  EXPECT_EQ(push_to_s3(from, bucket, {}).present.size(), 2u);
  EXPECT_EQ(s3.puts - puts, 2);  // left as it is
  // A gc killed between rewriting the document and the page: the label is gone, the page's digest stale.
  s3.set(document_key, R"({"variants": {}})");
  auto again = push_to_s3(from, bucket, {});
  EXPECT_EQ(again.present.size(), 2u);
  const auto document = s3.objects.at(document_key).body;
  EXPECT_NE(document.find("0123abcd"), std::string::npos) << document;
  EXPECT_NE(s3.objects.at("bkt/p/simple/demo/index.html").body.find(sha256_hex(document)), std::string::npos);
}

TEST_F(S3Cache, AnOlderEntryCountingOnTheNewerForASharedNameTakesItWhenTheNewerIsNotThere) {
  const std::string newer_text = "cache_format 2\nnewer 1\n";
  source_cache(dir.path, newer_text);
  for (const auto& entry : from.entries())
    if (entry.hash == sha256_hex(newer_text))
      std::filesystem::last_write_time(entry.dir / "manifest.json",
                                       std::filesystem::file_time_type::clock::now() + std::chrono::seconds(10));
  push_to_s3(from, bucket, {});
  // The newer entry's objects go from the bucket, and its source copy is damaged, so it is not pushed again.
  std::erase_if(s3.objects, [&](const auto& object) {
    return object.first.starts_with("bkt/p/store/" + sha256_hex(newer_text) + "/");
  });
  for (const auto& entry : from.entries())
    if (entry.hash == sha256_hex(newer_text)) write_whole_file(entry.wheels[0], "damaged");
  auto again = push_to_s3(from, bucket, {});
  ASSERT_FALSE(again.not_pushed.empty());
  for (const auto& problem : again.not_pushed) EXPECT_TRUE(problem.starts_with(sha256_hex(newer_text))) << problem;
  EXPECT_EQ(again.present, std::vector<std::string>{kKeyHash});
  const auto page = s3.objects.at("bkt/p/simple/demo/index.html").body;
  EXPECT_NE(page.find("store/" + kKeyHash + "/wheels/demo-1.0"), std::string::npos) << page;
  EXPECT_EQ(page.find(sha256_hex(newer_text)), std::string::npos) << page;
}

TEST_F(S3Cache, TemporaryCredentialsSendTheirSessionTokenWithEveryRequest) {
  auto with_token = settings();
  with_token.session_token = "FwoGZXIvYXdzEXAMPLE";
  S3Client temporary(with_token, parse_s3_location("s3://bkt/p"), s3);
  int requests = 0, with_header = 0;
  s3.on_request = [&](const HttpRequest& request) {
    ++requests;
    for (const auto& header : request.headers) with_header += header == "x-amz-security-token: FwoGZXIvYXdzEXAMPLE";
  };
  push_to_s3(from, temporary, {});
  EXPECT_GT(requests, 5);
  EXPECT_EQ(with_header, requests);
}

TEST_F(S3Cache, RefusesAPrefixHoldingSomeoneElsesObjects) {
  s3.set("bkt/p/README", "theirs");
  auto message = error_of([&] { push_to_s3(from, bucket, {}); });
  EXPECT_NE(message.find("it holds s3://bkt/p/README"), std::string::npos) << message;
  EXPECT_EQ(s3.objects.size(), 1u);
}

TEST_F(S3Cache, RefusesAServerThatIgnoresConditionalWrites) {
  s3.ignore_conditions = true;
  const auto [code, message] = refusal();
  EXPECT_EQ(code, ExitCode::environment);
  EXPECT_NE(message.find("ignores conditional writes"), std::string::npos) << message;
  for (const auto& [key, object] : s3.objects) EXPECT_EQ(key, "bkt/p/.archbuild-cache");
}

TEST_F(S3Cache, RefusesAServerThatIgnoresIfMatch) {
  s3.ignore_if_match = true;
  const auto message = refusal().second;
  EXPECT_NE(message.find("If-Match on another ETag"), std::string::npos) << message;
}

TEST_F(S3Cache, VerifyAndGcTouchOnlyAPrefixArchbuildClaimed) {
  s3.set("bkt/other/store/important/data.bin", "theirs");
  S3Client other(settings(), parse_s3_location("s3://bkt/other"), s3);
  EXPECT_NE(error_of([&] { gc_s3(other, 1, false, {}); }).find("holds no .archbuild-cache"), std::string::npos);
  EXPECT_NE(error_of([&] { verify_s3(other, dir.path, {}, false); }).find("holds no .archbuild-cache"),
            std::string::npos);
  EXPECT_EQ(s3.objects.size(), 1u);
}

TEST_F(S3Cache, GcNeverFollowsDotSegmentsOrKeepsAForgedEntry) {
  push_to_s3(from, bucket, {});
  s3.set("bkt/victim/keep.txt", "elsewhere");
  s3.set("bkt/p/store/" + std::string(64, 'a') + "/../../../victim/keep.txt", "odd");
  // A copy of the entry under another name: its key.txt does not hash to it.
  std::vector<std::pair<std::string, FakeS3::Object>> copies;
  for (const auto& [key, object] : s3.objects)
    if (key.rfind("bkt/p/store/" + kKeyHash + "/", 0) == 0)
      copies.emplace_back("bkt/p/store/" + std::string(64, 'b') + key.substr(("bkt/p/store/" + kKeyHash).size()),
                          object);
  for (auto& [key, object] : copies) s3.objects[key] = object;
  auto steps = gc_s3(bucket, 1, false, {});
  EXPECT_TRUE(steps.empty());
  EXPECT_EQ(s3.objects.count("bkt/victim/keep.txt"), 1u);
  EXPECT_EQ(s3.objects.count("bkt/p/store/" + kKeyHash + "/key.txt"), 1u);
  auto verified = verify_s3(bucket, dir.path / "scratch", {}, false);
  bool named_odd = false, named_forged = false;
  for (const auto& problem : verified.problems) {
    named_odd |= problem.find("victim/keep.txt: not an object archbuild writes") != std::string::npos;
    named_forged |= problem.find("key.txt does not hash") != std::string::npos;
  }
  EXPECT_TRUE(named_odd);
  EXPECT_TRUE(named_forged);
}

// A push killed after key.txt and before its links: the entry is finished
// but on no page. Not installable, never wrong: a warning, and the next push
// lists it.
TEST_F(S3Cache, AFinishedEntryOnNoPageIsUnlistedNotAProblem) {
  push_to_s3(from, bucket, {});
  s3.objects.erase("bkt/p/simple/demo/index.html");
  auto verified = verify_s3(bucket, dir.path / "scratch", {}, false);
  EXPECT_TRUE(verified.problems.empty()) << verified.problems.front();
  ASSERT_EQ(verified.unlisted.size(), 1u);
  EXPECT_NE(verified.unlisted[0].find(".whl"), std::string::npos);
  push_to_s3(from, bucket, {});
  EXPECT_TRUE(verify_s3(bucket, dir.path / "scratch2", {}, false).unlisted.empty());
}

TEST(RemoteLockTest, TakesOverTheLockOfADeadProcessOnThisHostAndOfAStaleOne) {
  FakeS3 s3;
  S3Client bucket(settings(), parse_s3_location("s3://bkt/p"), s3);
  // pid 2^22+1 is above Linux's pid_max default: no such process.
  s3.set("bkt/p/locks/x", "archbuild lock 1\nhost " + host_name() + "\npid 4194305\nrenewed 99999999999\nowner z\n");
  {
    RemoteLock lock(bucket, "locks/x", std::chrono::seconds(600));
    lock.acquire();
    EXPECT_NE(s3.objects.at("bkt/p/locks/x").body.find("pid " + std::to_string(getpid())), std::string::npos);
    EXPECT_TRUE(lock.renew());
  }
  EXPECT_EQ(s3.objects.count("bkt/p/locks/x"), 0u);
  s3.set("bkt/p/locks/x", "archbuild lock 1\nhost elsewhere\npid 1\nrenewed 1\nowner z\n");  // 1970: stale
  RemoteLock lock(bucket, "locks/x", std::chrono::seconds(600));
  lock.acquire();
  // Someone takes it over meanwhile: renewing fails, and releasing leaves theirs alone.
  s3.set("bkt/p/locks/x", "archbuild lock 1\nhost elsewhere\npid 1\nrenewed 1\nowner y\n");
  EXPECT_FALSE(lock.renew());
  lock.release();
  EXPECT_EQ(s3.objects.count("bkt/p/locks/x"), 1u);
}
