#include "cache/store_maintenance.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cache/wheel_store.h"

using namespace archbuild;

TEST(StoreGc, KeepsTheNewestPerProjectAndArchList) {
  auto entry = [](const std::string& hash, const std::string& wheel, const std::string& arch_list) {
    StoreEntry e;
    e.hash = hash;
    e.wheels = {"/c/store/" + hash + "/wheels/" + wheel};
    e.key = {{"arch_list", arch_list}};
    return e;
  };
  // newest first, as WheelStore::entries() returns them
  std::vector<StoreEntry> entries = {entry("a", "torch-2.9.1+cu130.sm90-cp311-cp311-linux_x86_64.whl", "9.0"),
                                     entry("b", "torch-2.9.1+cu130.sm80-cp311-cp311-linux_x86_64.whl", "8.0"),
                                     entry("c", "torch-2.9.0+cu130.sm90-cp311-cp311-linux_x86_64.whl", "9.0"),
                                     entry("d", "Torch-2.8.0+cu130.sm90-cp311-cp311-linux_x86_64.whl", "9.0"),
                                     entry("e", "fixture-1.0+cu130.sm90-py3-none-linux_x86_64.whl", "9.0")};
  EXPECT_EQ(gc_group(entries[0]), "torch 9.0");
  auto doomed = entries_to_collect(entries, 2);
  ASSERT_EQ(doomed.size(), 1u);
  EXPECT_EQ(doomed[0].hash, "d");
  doomed = entries_to_collect(entries, 1);
  ASSERT_EQ(doomed.size(), 2u);
  EXPECT_EQ(doomed[0].hash, "c");
  EXPECT_EQ(doomed[1].hash, "d");
}

TEST(IndexPage, LinksAreScannedWithoutRecursion) {
  auto links = index_page_links(
      "<a href=\"../../wheels/demo-1.0-py3-none-any.whl#sha256=" + std::string(64, 'a') +
      "\">demo</a><br>\n<a href=\"demo/\">no digest</a><a href=\"x.whl#md5=00\">other hash</a>");
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(links[0].href, "../../wheels/demo-1.0-py3-none-any.whl");
  EXPECT_EQ(links[0].sha256, std::string(64, 'a'));
  // A libstdc++ std::regex overflowed the stack on an href this long.
  auto huge = index_page_links("<a href=\"" + std::string(4'000'000, 'a') + "#sha256=" + std::string(64, '0') + "\">");
  ASSERT_EQ(huge.size(), 1u);
  EXPECT_EQ(huge[0].href.size(), 4'000'000u);
  std::string noise(1 << 20, '\0');
  uint32_t state = 7;
  for (auto& c : noise) c = static_cast<char>((state = state * 1103515245 + 12345) >> 24);
  index_page_links(noise);  // arbitrary bytes: no crash, whatever it finds
  EXPECT_TRUE(index_page_links("href=\"unterminated#sha256=").empty());
}

TEST(IndexPage, PercentDecodingRejectsMalformedEscapes) {
  EXPECT_EQ(percent_decode("torch-2.9.1%2Bcu130.sm90-cp311.whl"), "torch-2.9.1+cu130.sm90-cp311.whl");
  EXPECT_EQ(percent_decode("a%2fb%41"), "a/bA");
  EXPECT_EQ(percent_decode("plain"), "plain");
  EXPECT_FALSE(percent_decode("x%zz.whl"));
  EXPECT_FALSE(percent_decode("x%4"));
  EXPECT_FALSE(percent_decode("x%"));
  EXPECT_FALSE(percent_decode("x%00.whl"));
}
