#include "gpu/module_loader.h"

#include <gtest/gtest.h>

using namespace archbuild;

TEST(LoadShard, ParsesIndexOfCountAndRefusesTheRest) {
  auto shard = LoadShard::parse("2/8");
  ASSERT_TRUE(shard);
  EXPECT_EQ(shard->index, 2u);
  EXPECT_EQ(shard->count, 8u);
  EXPECT_EQ(shard->str(), "2/8");
  for (const char* bad : {"8/8", "1/0", "/4", "1/", "a/4", "-1/4", "1/4x", "", "3", "99999/100000"})
    EXPECT_FALSE(LoadShard::parse(bad)) << bad;
}

TEST(LoadShard, EveryContainerFallsToExactlyOneShard) {
  for (size_t count : {1u, 3u, 16u})
    for (size_t container = 0; container < 40; ++container) {
      size_t takers = 0;
      for (size_t index = 0; index < count; ++index) takers += LoadShard{index, count}.takes(container);
      EXPECT_EQ(takers, 1u) << container << " of " << count;
    }
}

TEST(ModuleLoadReport, MergesShardsKeepingEachLoadAndUnreadableFilesOnce) {
  ModuleLoadReport first, second;
  first.devices = second.devices = {"0: NVIDIA H200 (9.0)"};
  first.loads = {{"a.whl!a.so", 16, 0, "CUDA_SUCCESS"}};
  second.loads = {{"a.whl!a.so", 4096, 0, "CUDA_ERROR_INVALID_PTX"}, {"a.whl!b.so", 16, 0, "CUDA_SUCCESS"}};
  first.unreadable = second.unreadable = {"a.whl!c.so: truncated"};
  first.skipped = 1;
  second.skipped = 2;
  auto all = ModuleLoadReport::merged({first, second});
  EXPECT_EQ(all.devices, first.devices);
  EXPECT_EQ(all.loads.size(), 3u);
  EXPECT_EQ(all.unreadable.size(), 1u);
  EXPECT_EQ(all.skipped, 3u);
  EXPECT_EQ(all.failed(), 2u);  // the refused PTX and the unreadable file
  EXPECT_EQ(ModuleLoadReport::from_json(all.to_json()).loads.size(), 3u);
}
