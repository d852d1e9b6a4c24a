#include "core/strings.h"

#include <gtest/gtest.h>

using namespace archbuild;

TEST(Plan, ShellQuoting) {
  EXPECT_EQ(shell_quote("plain/path-1.0"), "plain/path-1.0");
  EXPECT_EQ(shell_quote("8.0;9.0+PTX"), "'8.0;9.0+PTX'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote(""), "''");
}
