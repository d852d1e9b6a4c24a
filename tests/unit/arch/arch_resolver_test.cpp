#include "arch/arch_resolver.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "arch/arch_test_support.h"
#include "arch/compute_capability.h"
#include "core/error.h"
#include "core/exit_code.h"

using namespace archbuild;

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
  // This machine's SASS in every dialect; native+PTX adds PTX for the newest GPU.
  EXPECT_EQ(resolve("native", ArchDialect::extension), "8.6;9.0");
  EXPECT_EQ(resolve("native+PTX"), "8.6;9.0+PTX");
  EXPECT_EQ(resolve("Native+ptx", ArchDialect::extension), "8.6;9.0+PTX");
  resolve.gpus = std::vector<ComputeCapability>{{6, 1}};  // a Pascal card with CUDA 13
  EXPECT_EQ(code_of([&] { resolve("native"); }), ExitCode::environment);
}

// The facts of the aarch64 machines (docs/CUDA_FACTS.md#aarch64-machines).
TEST(ArchResolve, ThorIs101ToCuda12And110ToCuda13) {
  Resolver cuda13({13, 0});
  auto resolved = cuda13.resolve("10.1");  // its CUDA 12 name: CUDA 13 builds its own
  EXPECT_EQ(format_arch_list(resolved.list, ArchDialect::cmake), "11.0");
  ASSERT_EQ(resolved.notes.size(), 1u);
  EXPECT_NE(resolved.notes[0].find("CUDA 13.0 calls Jetson Thor 11.0, not 10.1: building sm_110"), std::string::npos)
      << resolved.notes[0];
  EXPECT_EQ(cuda13("10.1a"), "11.0a");
  Resolver cuda129({12, 9});
  EXPECT_EQ(cuda129("10.1"), "10.1");
  try {
    cuda129("11.0");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), ExitCode::environment);
    std::string text = e.what();
    EXPECT_NE(text.find("it needs CUDA 13.0 or newer"), std::string::npos) << text;
    EXPECT_NE(text.find("CUDA 12.9 calls that GPU (Jetson Thor) 10.1: --arch 10.1"), std::string::npos) << text;
  }
  // A Thor under a CUDA 13 driver reports 11.0: native is its own CC.
  cuda13.gpus = std::vector<ComputeCapability>{{11, 0}};
  EXPECT_EQ(cuda13("native"), "11.0");
}

TEST(ArchResolve, NativeBuildsTheFamilysCodeATookitCanWhereItCannotTargetTheGpu) {
  struct Row {
    CudaVersion cuda;
    ComputeCapability gpu;
    const char* list;  // what native builds
    bool noted;        // with a note saying why
  } rows[] = {
      {{12, 8}, {12, 1}, "12.0", true},                                    // GB10 before CUDA 12.9: sm_120 runs there
      {{12, 9}, {12, 1}, "12.1", false},                                   // its own from 12.9 on
      {{12, 8}, {10, 3}, "10.0", true},                                    // GB300 before 12.9
      {{13, 0}, {10, 3}, "10.3", false}, {{13, 0}, {9, 0}, "9.0", false},  // GH200
      {{13, 0}, {10, 0}, "10.0", false},                                   // GB200
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.gpu.dotted() + " with CUDA " + row.cuda.str());
    Resolver resolver(row.cuda);
    resolver.gpus = std::vector<ComputeCapability>{row.gpu};
    auto resolved = resolver.resolve("native");
    EXPECT_EQ(format_arch_list(resolved.list, ArchDialect::cmake), row.list);
    EXPECT_EQ(!resolved.notes.empty(), row.noted);
  }
  // Never across majors, and never onto a Tegra part's own code.
  Resolver cuda126({12, 6});
  cuda126.gpus = std::vector<ComputeCapability>{{12, 1}};
  EXPECT_EQ(code_of([&] { cuda126("native"); }), ExitCode::environment);
}

TEST(ArchResolve, OfficialOnAarch64IsTheAarch64WheelsList) {
  struct Row {
    CudaVersion cuda;
    const char* x86_64;
    const char* aarch64;
  } rows[] = {
      {{13, 0}, "7.5;8.0;8.6;9.0;10.0;12.0+PTX", "8.0;9.0;10.0;11.0;12.0+PTX"},
      {{12, 9}, "7.5;8.0;8.6;9.0;10.0;12.0+PTX", "8.0;9.0;10.0;12.0+PTX"},
      {{12, 8}, "7.5;8.0;8.6;9.0;10.0;12.0", "8.0;9.0;10.0;12.0"},
      {{12, 6}, "5.0;6.0;7.0;7.5;8.0;8.6;9.0", "8.0;9.0"},
  };
  for (const auto& row : rows) {
    Resolver resolver(row.cuda);
    EXPECT_EQ(resolver("official"), row.x86_64);
    resolver.machine = "aarch64";
    EXPECT_EQ(resolver("official"), row.aarch64);
  }
  // No aarch64 list for the toolkit: the nearest older one's, or the x86-64 list, each with a note.
  Resolver cuda125({12, 5});
  cuda125.machine = "aarch64";
  auto resolved = cuda125.resolve("official");
  EXPECT_EQ(format_arch_list(resolved.list, ArchDialect::cmake), "5.0;6.0;7.0;7.5;8.0;8.6;9.0");
  ASSERT_EQ(resolved.notes.size(), 2u);
  EXPECT_NE(resolved.notes[0].find("no aarch64 arch list for CUDA 12.5 or older"), std::string::npos);
  Resolver cuda13({13, 0});
  cuda13.machine = "aarch64";
  EXPECT_TRUE(cuda13.resolve("official").notes.empty());
}

TEST(ArchResolve, NativeIsSassOnlyForCppExtensionToo) {
  Resolver resolve({13, 0});
  resolve.gpus = std::vector<ComputeCapability>{{9, 0}};
  const auto names = CppExtensionArchTable::load_default().for_torch("2.11.0");
  ArchResolveInputs in{resolve.toolkit, resolve.tables.release_targets(), resolve.gpus, "no GPU (test)"};
  in.names = &names;
  EXPECT_EQ(resolve_archs(parse_arch_spec("native", names), in).list.canonical(), "9.0");
  EXPECT_EQ(resolve_archs(parse_arch_spec("native+PTX", names), in).list.canonical(), "9.0+PTX");
}

TEST(ArchList, ParsesARecordedListAndRefusesKeywords) {
  EXPECT_EQ(parse_arch_list("8.0;9.0+PTX;10.0a").canonical(), "8.0;9.0+PTX;10.0a");
  EXPECT_EQ(parse_arch_list("compute_90").canonical(), "compute_90");
  EXPECT_EQ(code_of([] { parse_arch_list("native"); }), ExitCode::bad_input);
  EXPECT_EQ(code_of([] { parse_arch_list("9.0;bogus"); }), ExitCode::bad_input);
}
