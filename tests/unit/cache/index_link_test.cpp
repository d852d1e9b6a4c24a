#include "cache/index_link.h"

#include <gtest/gtest.h>

namespace archbuild {
namespace {

TEST(IndexLink, ALinkStaysUnderTheRootOrIsRefusedSayingWhy) {
  const std::filesystem::path page = "simple/torch";
  auto judged = judge_index_link(page, "../../store/ab12/wheels/torch-2.9.1-cp312-cp312-linux_x86_64.whl");
  EXPECT_EQ(judged.verdict, LinkVerdict::inside);
  EXPECT_EQ(judged.path, "store/ab12/wheels/torch-2.9.1-cp312-cp312-linux_x86_64.whl");
  judged = judge_index_link("simple/torch/", "torch-variants.json");  // a bucket's page dir ends in '/'
  EXPECT_EQ(judged.path, "simple/torch/torch-variants.json");
  // a file name with two dots in a row is a name, not a climb
  EXPECT_EQ(judge_index_link(page, "../../wheels/a..b-1.0-py3-none-any.whl").verdict, LinkVerdict::inside);

  for (const char* href : {"../../../etc/passwd", "../../..", "a/../../../../x", "../.."})
    EXPECT_EQ(judge_index_link(page, href).verdict, LinkVerdict::outside) << href;
  for (const char* href : {"/etc/passwd", "https://evil.example/x.whl", "file:///etc/passwd", ""})
    EXPECT_EQ(judge_index_link(page, href).verdict, LinkVerdict::not_relative) << href;
}

}  // namespace
}  // namespace archbuild
