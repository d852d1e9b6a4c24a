#include "wheel/wheel_relabel.h"

#include <initializer_list>

#include <gtest/gtest.h>

#include "arch/arch_target.h"
#include "toolchain/cuda_version.h"

using namespace archbuild;

namespace {
ArchList archs(std::initializer_list<ArchTarget> targets) {
  ArchList list;
  for (const auto& target : targets) list.add(target);
  return list;
}
}  // namespace

TEST(LocalVersionLabel, NamesToolkitAndEveryTarget) {
  CudaVersion cuda{13, 0};
  EXPECT_EQ(local_version_label(cuda, archs({{{9, 0}}})), "cu130.sm90");
  EXPECT_EQ(local_version_label({12, 8}, archs({{{8, 0}},
                                                {{9, 0}, ArchVariant::arch_specific},
                                                {{12, 0}, ArchVariant::plain, true, true}})),
            "cu128.sm80.sm90a.sm120ptx");
  EXPECT_EQ(local_version_label(cuda, archs({{{8, 6}, ArchVariant::plain, false, true}})), "cu130.compute86");
  EXPECT_EQ(local_version_label(cuda, archs({{{10, 0}, ArchVariant::family_specific}})), "cu130.sm100f");
}

TEST(LocalVersionLabel, AppendsToAnExistingLocalPartOnce) {
  EXPECT_EQ(version_with_label("2.9.1", "cu130.sm90"), "2.9.1+cu130.sm90");
  EXPECT_EQ(version_with_label("2.9.0a0+git1a2b3c", "cu130.sm90"), "2.9.0a0+git1a2b3c.cu130.sm90");
  EXPECT_EQ(version_with_label("2.9.1+cu130.sm90", "cu130.sm90"), "2.9.1+cu130.sm90");
  EXPECT_EQ(version_with_label("2.9.0a0+git1.cu130.sm90", "cu130.sm90"), "2.9.0a0+git1.cu130.sm90");
}
