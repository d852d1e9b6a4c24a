#include "arch/compat.h"

#include <gtest/gtest.h>

#include "arch/arch_target.h"
#include "arch/compute_capability.h"

using namespace archbuild;

namespace {
KernelImage sass(int major, int minor, ArchVariant v = ArchVariant::plain) {
  return {KernelImage::Kind::sass, {major, minor}, v};
}
KernelImage ptx(int major, int minor, ArchVariant v = ArchVariant::plain) {
  return {KernelImage::Kind::ptx, {major, minor}, v};
}
constexpr auto A = ArchVariant::arch_specific;
constexpr auto F = ArchVariant::family_specific;
}  // namespace

struct CompatCase {
  KernelImage image;
  ComputeCapability device;
  RunVerdict expected;
};

class Compat : public ::testing::TestWithParam<CompatCase> {};
TEST_P(Compat, Rules) {
  const auto& c = GetParam();
  EXPECT_EQ(can_run(c.image, c.device), c.expected) << c.image.name() << " on " << c.device.dotted();
}

// One case per line, grouped by rule.
// clang-format off
INSTANTIATE_TEST_SUITE_P(
    Rules, Compat,
    ::testing::Values(
        // SASS: same major, device minor >= image minor
        CompatCase{sass(8, 0), {8, 0}, RunVerdict::native},
        CompatCase{sass(8, 0), {8, 6}, RunVerdict::native},
        CompatCase{sass(8, 0), {8, 9}, RunVerdict::native},
        CompatCase{sass(8, 6), {8, 0}, RunVerdict::no_kernel_image},
        CompatCase{sass(8, 0), {9, 0}, RunVerdict::no_kernel_image},  // never across majors
        CompatCase{sass(9, 0), {8, 0}, RunVerdict::no_kernel_image},
        CompatCase{sass(10, 0), {10, 3}, RunVerdict::native},
        CompatCase{sass(12, 0), {12, 1}, RunVerdict::native},
        // Tegra / Jetson parts: only their own code, and theirs runs nowhere else
        CompatCase{sass(8, 0), {8, 7}, RunVerdict::no_kernel_image},
        CompatCase{sass(8, 7), {8, 9}, RunVerdict::no_kernel_image},
        CompatCase{sass(8, 7), {8, 7}, RunVerdict::native},
        CompatCase{sass(7, 0), {7, 2}, RunVerdict::no_kernel_image},
        CompatCase{sass(7, 2), {7, 5}, RunVerdict::no_kernel_image},
        CompatCase{sass(6, 0), {6, 2}, RunVerdict::no_kernel_image},
        CompatCase{sass(5, 0), {5, 3}, RunVerdict::no_kernel_image},
        CompatCase{sass(10, 0), {10, 1}, RunVerdict::no_kernel_image},  // 10.1 = Thor
        // a: exactly that CC
        CompatCase{sass(9, 0, A), {9, 0}, RunVerdict::native},
        CompatCase{sass(10, 0, A), {10, 3}, RunVerdict::no_kernel_image},
        CompatCase{sass(12, 0, A), {12, 1}, RunVerdict::no_kernel_image},
        CompatCase{ptx(9, 0, A), {9, 0}, RunVerdict::ptx_jit},
        CompatCase{ptx(9, 0, A), {10, 0}, RunVerdict::no_kernel_image},
        // f: the family
        CompatCase{sass(10, 0, F), {10, 3}, RunVerdict::native},
        CompatCase{sass(10, 0, F), {12, 0}, RunVerdict::no_kernel_image},
        CompatCase{sass(12, 0, F), {12, 1}, RunVerdict::native},
        CompatCase{ptx(10, 0, F), {10, 3}, RunVerdict::ptx_jit},
        CompatCase{ptx(10, 0, F), {12, 0}, RunVerdict::no_kernel_image},
        // PTX: JIT on any device at least as new, Tegra included
        CompatCase{ptx(8, 0), {9, 0}, RunVerdict::ptx_jit},
        CompatCase{ptx(8, 0), {12, 0}, RunVerdict::ptx_jit},
        CompatCase{ptx(8, 0), {8, 7}, RunVerdict::ptx_jit},
        CompatCase{ptx(9, 0), {8, 6}, RunVerdict::no_kernel_image},
        CompatCase{ptx(12, 0), {9, 0}, RunVerdict::no_kernel_image}));
// clang-format on

TEST(Compat, BestVerdictPrefersNative) {
  EXPECT_EQ(best_verdict(RunVerdict::ptx_jit, RunVerdict::native), RunVerdict::native);
  EXPECT_EQ(best_verdict(RunVerdict::no_kernel_image, RunVerdict::ptx_jit), RunVerdict::ptx_jit);
  EXPECT_EQ(best_verdict(RunVerdict::no_kernel_image, RunVerdict::no_kernel_image), RunVerdict::no_kernel_image);
  EXPECT_EQ(to_string(RunVerdict::no_kernel_image), "no-kernel-image");
}
