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
  resolve.gpus = std::vector<ComputeCapability>{{6, 1}};  // a Pascal card with CUDA 13
  EXPECT_EQ(code_of([&] { resolve("native"); }), ExitCode::environment);
}
