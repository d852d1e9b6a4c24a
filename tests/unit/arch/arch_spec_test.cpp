#include "arch/arch_spec.h"

#include <string>

#include <gtest/gtest.h>

#include "arch/arch_test_support.h"
#include "core/error.h"
#include "core/exit_code.h"

using namespace archbuild;

struct GoodSpec {
  const char* spec;
  const char* cmake;
};

class GoodSpecs : public ::testing::TestWithParam<GoodSpec> {};

TEST_P(GoodSpecs, ResolveWithCuda13) {
  Resolver resolve({13, 0});
  EXPECT_EQ(resolve(GetParam().spec), GetParam().cmake) << GetParam().spec;
}

INSTANTIATE_TEST_SUITE_P(
    Grammar, GoodSpecs,
    ::testing::Values(GoodSpec{"8.6", "8.6"}, GoodSpec{"86", "8.6"}, GoodSpec{"sm_86", "8.6"}, GoodSpec{"SM_86", "8.6"},
                      GoodSpec{"8.6+PTX", "8.6+PTX"}, GoodSpec{"8.6+ptx", "8.6+PTX"}, GoodSpec{"9.0a", "9.0a"},
                      GoodSpec{"sm_90a", "9.0a"}, GoodSpec{"10.0f", "10.0f"}, GoodSpec{"sm_100f", "10.0f"},
                      GoodSpec{"120", "12.0"}, GoodSpec{"Hopper", "9.0"}, GoodSpec{"ampere", "8.0;8.6"},
                      GoodSpec{"Ampere+PTX", "8.0+PTX;8.6+PTX"}, GoodSpec{"Blackwell", "10.0;12.0"},
                      GoodSpec{"Turing", "7.5"}, GoodSpec{"Ada", "8.9"},
                      // separators, duplicates merged, sorted
                      GoodSpec{"9.0;8.0,8.6 9.0", "8.0;8.6;9.0"}, GoodSpec{"9.0 9.0+PTX", "9.0+PTX"},
                      GoodSpec{"12.0;sm_90a;9.0", "9.0;9.0a;12.0"},
                      GoodSpec{"official", "7.5;8.0;8.6;9.0;10.0;12.0+PTX"},
                      GoodSpec{"all", "7.5;8.0;8.6;8.7;8.8;8.9;9.0;10.0;10.3;11.0;12.0;12.1+PTX"},
                      GoodSpec{"official;12.1", "7.5;8.0;8.6;9.0;10.0;12.0+PTX;12.1"}));

TEST(ArchSpec, PtxOnlyItemParsesButNeedsPlusPtxInEitherDialect) {
  auto items = parse_arch_spec("compute_86");
  ASSERT_EQ(items.size(), 1u);
  ASSERT_EQ(items[0].targets.size(), 1u);
  EXPECT_FALSE(items[0].targets[0].sass);
  EXPECT_TRUE(items[0].targets[0].ptx);
  Resolver resolve({13, 0});
  EXPECT_EQ(code_of([&] { resolve("compute_86"); }), ExitCode::bad_input);
  try {
    resolve("compute_86");
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("8.6+PTX"), std::string::npos) << e.what();
  }
}

class MalformedSpecs : public ::testing::TestWithParam<const char*> {};
TEST_P(MalformedSpecs, AreBadInputNamingTheItem) {
  Resolver resolve({13, 0});
  try {
    resolve(GetParam());
    FAIL() << GetParam() << " was accepted";
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input) << GetParam();
    EXPECT_NE(std::string(e.what()).find(GetParam()), std::string::npos) << e.what();
  }
}
INSTANTIATE_TEST_SUITE_P(Grammar, MalformedSpecs,
                         ::testing::Values("sm_999", "8.6+PXT", "9.0b", "sm_", "8.", ".6", "8.66", "compute_86+PTX",
                                           "Ampre", "sm_86x", "8.6a", "0.0", "1234", "+PTX"));

TEST(ArchSpec, EmptySpecIsBadInput) {
  EXPECT_EQ(code_of([] { parse_arch_spec(" ;, "); }), ExitCode::bad_input);
}
