#include "toolchain/toolchain.h"

#include <optional>
#include <vector>

#include <gtest/gtest.h>

#include "arch/arch_target.h"
#include "arch/compute_capability.h"
#include "arch/cuda_version.h"
#include "core/error.h"
#include "core/exit_code.h"
#include "test_support.h"
#include "toolchain/installed_toolkit.h"

using namespace archbuild;

TEST(Toolchain, InstalledNvccWinsOverTheTable) {
  InstalledToolkit fake;
  fake.version = {13, 2};
  fake.release = "13.2.78";
  fake.sass_targets = {{7, 5}, {9, 0}, {12, 0}};
  fake.ptx_targets = fake.sass_targets;
  auto chain = toolchain_from_installed(fake, table());
  EXPECT_EQ(chain.facts.targets, fake.sass_targets);
  std::vector<ComputeCapability> a = {{9, 0}, {12, 0}};
  EXPECT_EQ(chain.facts.arch_specific, a);
  EXPECT_EQ(chain.facts.min_driver, "580.65.06");
  ASSERT_EQ(chain.notes.size(), 1u);
  EXPECT_NE(chain.notes[0].find("13.0"), std::string::npos);
  EXPECT_EQ(chain.key_string(), "13.2.78");  // the exact release, not 13.2
}

TEST(Toolchain, SelectByVersion) {
  auto t = table();
  InstalledToolkit a, b;
  a.version = {13, 0};
  a.sass_targets = {{9, 0}};
  b.version = {13, 2};
  b.sass_targets = {{12, 0}};
  std::vector<InstalledToolkit> installed = {a, b};
  EXPECT_EQ(select_toolchain(installed, t, std::nullopt).version(), (CudaVersion{13, 0}));
  EXPECT_EQ(select_toolchain(installed, t, CudaVersion{13, 2}).version(), (CudaVersion{13, 2}));
  auto table_only = select_toolchain(installed, t, CudaVersion{12, 9});
  EXPECT_FALSE(table_only.installed.has_value());
  EXPECT_EQ(table_only.key_string(), "12.9");
  EXPECT_TRUE(table_only.facts.can_target({5, 0}, ArchVariant::plain));
  EXPECT_THROW(select_toolchain(installed, t, CudaVersion{9, 9}), UserError);
  try {
    select_toolchain({}, t, std::nullopt);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), ExitCode::environment);
  }
}
