#include "core/user_path.h"

#include <gtest/gtest.h>

#include "core/error.h"

using namespace archbuild;

namespace {

std::string refusal(const std::string& text) {
  try {
    checked_user_path(text, "--out");
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    return e.what();
  }
  return "";
}

}  // namespace

TEST(UserPath, AnOrdinaryPathIsMadeAbsolute) {
  EXPECT_EQ(checked_user_path("/tmp/cache", "--cache-dir"), "/tmp/cache");
  EXPECT_TRUE(checked_user_path("relative/dir", "--out").is_absolute());
  EXPECT_EQ(refusal("/tmp/" + std::string(255, 'x')), "");
}

TEST(UserPath, ANulIsRefusedWithTheValueEscaped) {
  EXPECT_EQ(refusal(std::string("\0", 1)), "--out = \"\\u0000\" holds a NUL character, which no path can");
  EXPECT_NE(refusal(std::string("/tmp/a\0b", 8)).find("\"/tmp/a\\u0000b\""), std::string::npos);
}

TEST(UserPath, AComponentLongerThanNameMaxIsRefused) {
  auto message = refusal("/tmp/" + std::string(256, 'x') + "/cache");
  EXPECT_NE(message.find("is 256 bytes, more than the 255 a file name may have (NAME_MAX)"), std::string::npos)
      << message;
  EXPECT_NE(refusal(std::string(8000, 'a').replace(100, 1, "/")).find("bytes"), std::string::npos);
  std::string deep;
  for (int i = 0; i < 40; ++i) deep += "/" + std::string(200, 'd');
  EXPECT_NE(refusal(deep).find("PATH_MAX"), std::string::npos);
}
