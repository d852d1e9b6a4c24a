#include "builder/ninja_trace.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

using namespace archbuild;

TEST(NinjaTrace, LogToChromeTrace) {
  auto dir = std::filesystem::temp_directory_path() / ("archbuild-ninja-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string previous = "# ninja log v5\n0\t2500\t0\told.o\tdeadbeef\n";      // an earlier build
  std::ofstream(dir / ".ninja_log") << previous << "10\t1000\t0\tb.o\tbbbb\n"  // appended as steps finish
                                    << "1000\t1500\t0\tc.o\tcccc\n"
                                    << "0\t3000\t0\ta.o\taaaa\n";
  auto steps = read_ninja_log(dir / ".ninja_log", previous.size());
  ASSERT_EQ(steps.size(), 3u);                               // this build only
  EXPECT_EQ(read_ninja_log(dir / ".ninja_log").size(), 3u);  // from 0: old.o ends after b.o, so a new build began
  auto trace = chrome_trace(steps);
  ASSERT_EQ(trace["traceEvents"].size(), 3u);
  EXPECT_EQ(trace["traceEvents"][0]["name"], "a.o");
  EXPECT_EQ(trace["traceEvents"][0]["dur"], 3000 * 1000);
  EXPECT_EQ(trace["traceEvents"][1]["tid"], 1);  // b overlaps a
  EXPECT_EQ(trace["traceEvents"][2]["tid"], 1);  // c reuses b's lane
  EXPECT_EQ(slowest_steps(steps, 1)[0].target, "a.o");
  std::filesystem::remove_all(dir);
}
