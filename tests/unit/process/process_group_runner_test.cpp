#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "core/interrupt.h"
#include "process/command_runner.h"

using namespace archbuild;

namespace {

GroupRunSpec shell(const std::string& script) {
  GroupRunSpec spec;
  spec.argv = {"sh", "-c", script};
  spec.working_dir = std::filesystem::temp_directory_path();
  spec.tick = std::chrono::milliseconds(20);
  spec.grace = std::chrono::milliseconds(300);
  return spec;
}

// archbuild's handler, as main() installs it; each test leaves no signal pending.
class GroupRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    install_interrupt_exit();
    clear_pending_interrupt();
  }
  void TearDown() override { clear_pending_interrupt(); }
};

}  // namespace

TEST_F(GroupRunnerTest, LinesAndExitStatus) {
  ProcessGroupRunner runner;
  std::vector<std::pair<std::string, bool>> lines;
  auto outcome = runner.run(shell("echo out; echo err >&2; printf 'no newline'; exit 3"),
                            [&](std::string_view line, bool from_stderr) {
                              lines.emplace_back(std::string(line), from_stderr);
                            },
                            {});
  EXPECT_FALSE(outcome.interrupted);
  EXPECT_EQ(outcome.status.code, 3);
  EXPECT_EQ(outcome.describe(), "exit 3");
  std::sort(lines.begin(), lines.end());
  EXPECT_EQ(lines, (std::vector<std::pair<std::string, bool>>{{"err", true}, {"no newline", false}, {"out", false}}));
}

TEST_F(GroupRunnerTest, ALineWithoutEndIsKeptUpToACapAndHandedOnCut) {
  ProcessGroupRunner runner;
  std::vector<std::string> lines;
  // 3 MiB without a newline (split over many reads), then a short line
  auto outcome = runner.run(shell("head -c 3145728 /dev/zero | tr '\\0' x; printf '\\r\\nnext\\r\\n'"),
                            [&](std::string_view line, bool) { lines.emplace_back(line); }, {});
  EXPECT_EQ(outcome.status.code, 0);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].substr(0, 10), "xxxxxxxxxx");
  EXPECT_LT(lines[0].size(), (1u << 20) + 100);
  EXPECT_NE(lines[0].find("... (2097153 more bytes of this line not kept)"), std::string::npos)
      << lines[0].substr(1 << 20);
  EXPECT_EQ(lines[1], "next");
}

TEST_F(GroupRunnerTest, SignalDuringARunStopsItsGroup) {
  ProcessGroupRunner runner;
  bool raised = false;
  auto pid_file = std::filesystem::temp_directory_path() / ("archbuild-group-" + std::to_string(getpid()));
  auto started = std::chrono::steady_clock::now();
  auto outcome = runner.run(shell("echo $$ > '" + pid_file.string() + "'; sleep 30 & sleep 30; wait"), {}, [&] {
    if (!raised) ::raise(SIGINT);  // inside the run: recorded, not fatal
    raised = true;
  });
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
  EXPECT_TRUE(outcome.interrupted);
  EXPECT_EQ(outcome.interrupt_signal, SIGINT);
  EXPECT_EQ(outcome.describe(), "interrupted by SIGINT");
  EXPECT_EQ(pending_interrupt(), SIGINT);  // still there for a scheduler to see
  pid_t group = 0;
  std::ifstream(pid_file) >> group;
  std::filesystem::remove(pid_file);
  ASSERT_GT(group, 0);
  // Nothing of the group is left, once the killed ones are reaped (not by us: they were orphans).
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    gone = ::kill(-group, 0) == -1 && errno == ESRCH;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(gone);
}

TEST_F(GroupRunnerTest, KillAfterTheGracePeriod) {
  ProcessGroupRunner runner;
  bool raised = false;
  auto outcome = runner.run(shell("trap '' TERM; sleep 30"), {}, [&] {
    if (!raised) ::raise(SIGTERM);
    raised = true;
  });
  EXPECT_TRUE(outcome.interrupted);
  EXPECT_EQ(outcome.interrupt_signal, SIGTERM);
  EXPECT_TRUE(outcome.status.signaled);
  EXPECT_EQ(outcome.status.signal, SIGKILL);
}

TEST_F(GroupRunnerTest, TimeoutStopsTheWholeGroup) {
  ProcessGroupRunner runner;
  auto spec = shell("trap '' TERM; sleep 30 & sleep 30; wait");
  spec.timeout = std::chrono::milliseconds(100);
  auto outcome = runner.run(spec, {}, {});
  EXPECT_TRUE(outcome.timed_out);
  EXPECT_FALSE(outcome.interrupted);
  EXPECT_FALSE(outcome.succeeded());
  EXPECT_EQ(outcome.describe(), "timed out");
  EXPECT_TRUE(outcome.status.signaled);  // TERM ignored, so KILL after the grace period
  EXPECT_EQ(outcome.status.signal, SIGKILL);
  spec = shell("exit 0");
  spec.timeout = std::chrono::seconds(60);
  EXPECT_TRUE(runner.run(spec, {}, {}).succeeded());
}

TEST_F(GroupRunnerTest, PendingSignalStopsARunBeforeItStarts) {
  auto marker = std::filesystem::temp_directory_path() / ("archbuild-not-started-" + std::to_string(getpid()));
  std::filesystem::remove(marker);
  {
    InterruptibleScope scope;
    ::raise(SIGTERM);
  }
  EXPECT_EQ(pending_interrupt(), SIGTERM);
  ProcessGroupRunner runner;
  auto outcome = runner.run(shell("touch '" + marker.string() + "'"), {}, {});
  EXPECT_TRUE(outcome.interrupted);
  EXPECT_EQ(outcome.describe(), "interrupted by SIGTERM");
  EXPECT_FALSE(std::filesystem::exists(marker));
}

// Several builds in threads of one process: one signal stops all of them.
TEST_F(GroupRunnerTest, OneSignalStopsEveryConcurrentRun) {
  constexpr int kRuns = 3;
  std::atomic<int> ticking{0};
  std::vector<GroupRunOutcome> outcomes(kRuns);
  std::vector<std::thread> threads;
  for (int i = 0; i < kRuns; ++i)
    threads.emplace_back([&, i] {
      ProcessGroupRunner runner;
      bool counted = false;
      outcomes[i] = runner.run(shell("sleep 30"), {}, [&] {
        if (!counted) ticking.fetch_add(1);
        counted = true;
      });
    });
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (ticking.load() < kRuns && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(ticking.load(), kRuns);
  {
    InterruptibleScope scope;    // even if a run never started, the signal is only recorded
    ::kill(::getpid(), SIGINT);  // to the process, as a terminal's Ctrl-C: any thread may take it
  }
  for (auto& thread : threads) thread.join();
  for (const auto& outcome : outcomes) {
    EXPECT_TRUE(outcome.interrupted);
    EXPECT_EQ(outcome.interrupt_signal, SIGINT);
  }
}
