#include "wheel/pinned_wheel.h"

#include <gtest/gtest.h>

namespace archbuild {
namespace {

TEST(PinnedWheel, ReadsBackWhatItWritesAndNothingElse) {
  const std::string digest(64, 'a');
  const PinnedWheel wheel{"torch-2.9.1+cu130.sm90-cp312-cp312-linux_x86_64.whl", digest};
  const auto text = wheel.text();
  EXPECT_EQ(text, "torch-2.9.1+cu130.sm90-cp312-cp312-linux_x86_64.whl sha256 " + digest);
  auto read = PinnedWheel::parse(text);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->file, wheel.file);
  EXPECT_EQ(read->sha256, digest);
  // an installed torch is described in words; a short or non-hex digest is no pin
  EXPECT_FALSE(PinnedWheel::parse("torch 2.11.0+cu130 installed in /usr/bin/python3"));
  EXPECT_FALSE(PinnedWheel::parse("x.whl sha256 abc"));
  EXPECT_FALSE(PinnedWheel::parse("x.whl sha256 " + std::string(64, 'g')));
  EXPECT_FALSE(PinnedWheel::parse(" sha256 " + digest));
}

}  // namespace
}  // namespace archbuild
