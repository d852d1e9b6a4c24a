#include <gtest/gtest.h>

#include "arch/arch_spec.h"
#include "cache/store_maintenance.h"
#include "wheel/wheel_relabel.h"

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
  EXPECT_EQ(local_version_label({12, 8}, archs({{{8, 0}}, {{9, 0}, ArchVariant::arch_specific}, {{12, 0}, ArchVariant::plain, true, true}})),
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

TEST(StoreGc, KeepsTheNewestPerProjectAndArchList) {
  auto entry = [](const std::string& hash, const std::string& wheel, const std::string& arch_list) {
    StoreEntry e;
    e.hash = hash;
    e.wheels = {"/c/store/" + hash + "/wheels/" + wheel};
    e.key = {{"arch_list", arch_list}};
    return e;
  };
  // newest first, as WheelStore::entries() returns them
  std::vector<StoreEntry> entries = {entry("a", "torch-2.9.1+cu130.sm90-cp311-cp311-linux_x86_64.whl", "9.0"),
                                     entry("b", "torch-2.9.1+cu130.sm80-cp311-cp311-linux_x86_64.whl", "8.0"),
                                     entry("c", "torch-2.9.0+cu130.sm90-cp311-cp311-linux_x86_64.whl", "9.0"),
                                     entry("d", "Torch-2.8.0+cu130.sm90-cp311-cp311-linux_x86_64.whl", "9.0"),
                                     entry("e", "fixture-1.0+cu130.sm90-py3-none-linux_x86_64.whl", "9.0")};
  EXPECT_EQ(gc_group(entries[0]), "torch 9.0");
  auto doomed = entries_to_collect(entries, 2);
  ASSERT_EQ(doomed.size(), 1u);
  EXPECT_EQ(doomed[0].hash, "d");
  doomed = entries_to_collect(entries, 1);
  ASSERT_EQ(doomed.size(), 2u);
  EXPECT_EQ(doomed[0].hash, "c");
  EXPECT_EQ(doomed[1].hash, "d");
}
