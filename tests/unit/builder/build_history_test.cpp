#include "builder/build_history.h"

#include <sys/stat.h>

#include <fstream>

#include <gtest/gtest.h>

#include "test_support.h"

using namespace archbuild;

TEST(BuildHistory, RecordsRoundTripAndDamagedLinesAreSkipped) {
  TempDir dir;
  BuildTimeRecord record;
  record.recipe = "torch";
  record.ref = "v2.9.1";
  record.code_images = 3;
  record.parallelism = 16;
  record.wall_seconds = 3600;
  record.nvcc_seconds = 40000;
  record.tree_bytes = 12345;
  append_build_history(dir.path, record);
  std::ofstream(build_history_file(dir.path, "torch"), std::ios::app)
      << "not json\n{\"recipe\": \"torch\"}\n{\"recipe\":\"torch\",\"ref\":\"x\",\"code_images\":1,\"parallelism\":1,"
         "\"wall_seconds\":-5}\n";
  record.ref = "v2.10.0";
  append_build_history(dir.path, record);
  auto records = read_build_history(dir.path, "torch");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].ref, "v2.9.1");
  EXPECT_EQ(records[1].ref, "v2.10.0");
  EXPECT_EQ(records[1].code_images, 3u);
  EXPECT_EQ(records[1].tree_bytes, 12345u);
  EXPECT_TRUE(read_build_history(dir.path, "torchvision").empty());
}

TEST(BuildHistory, StepsSplitIntoNvccAndTheRest) {
  BuildTimeRecord record;
  record.wall_seconds = 30;
  record.parallelism = 2;
  record.cores = 2;
  std::vector<NinjaStep> steps = {
      {"CMakeFiles/x.dir/a.cu.o", 1000, 5000},   // CMake's CUDA object
      {"/abs/build/temp/k.o", 1000, 9000},       // cpp_extension's: named by the nvcc log
      {"CMakeFiles/x.dir/b.cpp.o", 5000, 6000},  // host code
      {"libx.so", 9000, 21000},                  // the link
  };
  fill_step_times(record, steps, {"build/temp/k.o"});
  EXPECT_DOUBLE_EQ(record.nvcc_seconds, 12);
  EXPECT_DOUBLE_EQ(record.other_seconds, 13);
  EXPECT_DOUBLE_EQ(record.span_seconds, 20);
  EXPECT_DOUBLE_EQ(record.serial_seconds, 10);
  // A build without ninja: all of it counts as compiles at its parallelism.
  fill_step_times(record, {}, {});
  EXPECT_DOUBLE_EQ(record.nvcc_seconds, 60);
  EXPECT_DOUBLE_EQ(record.serial_seconds, 0);
}

TEST(BuildHistory, AFifoInItsPlaceFailsAtOnce) {
  TempDir dir;
  std::filesystem::create_directories(dir.path / "history");
  ASSERT_EQ(::mkfifo(build_history_file(dir.path, "torch").c_str(), 0644), 0);
  BuildTimeRecord record;
  record.recipe = "torch";
  try {
    append_build_history(dir.path, record);  // no reader: a blocking open would hang here
    ADD_FAILURE() << "no error";
  } catch (const UserError& error) {
    EXPECT_EQ(error.code(), ExitCode::environment);
    EXPECT_NE(std::string(error.what()).find("history/torch.jsonl"), std::string::npos) << error.what();
  }
  EXPECT_TRUE(read_build_history(dir.path, "torch").empty());
}
