#include "cache/store_maintenance.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cache/wheel_store.h"

using namespace archbuild;

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
