#include <gtest/gtest.h>

#include "arch/arch_dialect.h"
#include "arch/arch_resolver.h"
#include "arch/arch_spec.h"
#include "core/error.h"
#include "toolchain/toolkit_facts.h"

using namespace archbuild;

namespace {

ToolkitTable table() { return ToolkitTable::load(ARCHBUILD_SOURCE_DIR "/toolchains"); }

struct Resolver {
  ToolkitTable tables = table();
  const ToolkitFacts* toolkit;
  std::optional<std::vector<ComputeCapability>> gpus;
  explicit Resolver(CudaVersion version) : toolkit(tables.find(version)) {}
  std::string operator()(const std::string& spec, ArchDialect dialect = ArchDialect::cmake) const {
    ArchResolveInputs in{toolkit, &tables, gpus, "no GPU (test)"};
    return format_arch_list(resolve_archs(parse_arch_spec(spec), in).list, dialect);
  }
};

ExitCode code_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const UserError& e) {
    return e.code();
  }
  return ExitCode::success;
}

}  // namespace

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
    ::testing::Values(GoodSpec{"8.6", "8.6"}, GoodSpec{"86", "8.6"}, GoodSpec{"sm_86", "8.6"},
                      GoodSpec{"SM_86", "8.6"}, GoodSpec{"8.6+PTX", "8.6+PTX"},
                      GoodSpec{"8.6+ptx", "8.6+PTX"}, GoodSpec{"9.0a", "9.0a"},
                      GoodSpec{"sm_90a", "9.0a"}, GoodSpec{"10.0f", "10.0f"},
                      GoodSpec{"sm_100f", "10.0f"}, GoodSpec{"120", "12.0"},
                      GoodSpec{"Hopper", "9.0"}, GoodSpec{"ampere", "8.0;8.6"},
                      GoodSpec{"Ampere+PTX", "8.0;8.6+PTX"}, GoodSpec{"Blackwell", "10.0;12.0"},
                      GoodSpec{"Turing", "7.5"}, GoodSpec{"Ada", "8.9"},
                      // separators, duplicates merged, sorted
                      GoodSpec{"9.0;8.0,8.6 9.0", "8.0;8.6;9.0"},
                      GoodSpec{"9.0 9.0+PTX", "9.0+PTX"}, GoodSpec{"12.0;sm_90a;9.0", "9.0;9.0a;12.0"},
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
                         ::testing::Values("sm_999", "8.6+PXT", "9.0b", "sm_", "8.", ".6", "8.66",
                                           "compute_86+PTX", "Ampre", "sm_86x", "8.6a", "0.0",
                                           "1234", "+PTX"));

TEST(ArchSpec, EmptySpecIsBadInput) {
  EXPECT_EQ(code_of([] { parse_arch_spec(" ;, "); }), ExitCode::bad_input);
}

TEST(ArchResolve, DroppedArchNamesLastToolkitThatCan) {
  Resolver cuda13({13, 0});
  try {
    cuda13("8.0;5.0");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), ExitCode::environment);
    std::string text = e.what();
    EXPECT_NE(text.find("'5.0'"), std::string::npos) << text;
    EXPECT_NE(text.find("CUDA 13.0"), std::string::npos) << text;
    EXPECT_NE(text.find("12.9"), std::string::npos) << text;
  }
  Resolver cuda129({12, 9});
  EXPECT_EQ(cuda129("5.0"), "5.0");
}

TEST(ArchResolve, NewArchNamesFirstToolkitThatCan) {
  Resolver cuda126({12, 6});
  try {
    cuda126("12.0");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), ExitCode::environment);
    EXPECT_NE(std::string(e.what()).find("CUDA 12.8 or newer"), std::string::npos) << e.what();
  }
  EXPECT_EQ(code_of([&] { cuda126("10.0f"); }), ExitCode::environment);
  Resolver cuda128({12, 8});
  EXPECT_EQ(code_of([&] { cuda128("10.0f"); }), ExitCode::environment);  // f arrives in 12.9
  Resolver cuda129({12, 9});
  EXPECT_EQ(cuda129("10.0f"), "10.0f");
}

TEST(ArchResolve, OfficialForUnshippedCudaUsesNearestOlderList) {
  Resolver cuda125({12, 5});
  EXPECT_EQ(cuda125("official"), "5.0;6.0;7.0;7.5;8.0;8.6;9.0");
  Resolver cuda126({12, 6});
  EXPECT_EQ(cuda126("official"), "5.0;6.0;7.0;7.5;8.0;8.6;9.0");
}

TEST(ArchResolve, NativeUsesEveryVisibleGpuAndFailsWithoutOne) {
  Resolver resolve({13, 0});
  EXPECT_EQ(code_of([&] { resolve("native"); }), ExitCode::environment);
  resolve.gpus = std::vector<ComputeCapability>{{9, 0}, {8, 6}};
  EXPECT_EQ(resolve("native"), "8.6;9.0");
  EXPECT_EQ(resolve("native;12.0+PTX"), "8.6;9.0;12.0+PTX");
  resolve.gpus = std::vector<ComputeCapability>{{6, 1}};  // a Pascal card with CUDA 13
  EXPECT_EQ(code_of([&] { resolve("native"); }), ExitCode::environment);
}

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
