#include "arch/arch_dialect.h"

#include <string>

#include <gtest/gtest.h>

#include "arch/arch_test_support.h"
#include "core/error.h"
#include "core/exit_code.h"

using namespace archbuild;

TEST(ArchDialect, ExtensionRejectsFamilyTargetsByName) {
  Resolver resolve({13, 0});
  EXPECT_EQ(resolve("9.0a;12.0+PTX", ArchDialect::extension), "9.0a;12.0+PTX");
  try {
    resolve("9.0;10.0f", ArchDialect::extension);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    EXPECT_NE(std::string(e.what()).find("10.0f"), std::string::npos) << e.what();
  }
  EXPECT_EQ(resolve("9.0;10.0f", ArchDialect::cmake), "9.0;10.0f");
}

TEST(ArchDialect, ParsesNames) {
  EXPECT_EQ(parse_arch_dialect("cmake"), ArchDialect::cmake);
  EXPECT_EQ(parse_arch_dialect("extension"), ArchDialect::extension);
  EXPECT_FALSE(parse_arch_dialect("CMake").has_value());
}
