#include "builder/step_log.h"

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "process/pid_namespace.h"

namespace archbuild {
namespace {

// A dir of its own per test, removed after it.
class StepLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("archbuild-step-log-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path fresh_log(const std::string& name) const { return dir_ / name; }
  std::filesystem::path dir_;
};

// The step launcher's line, written by a compile about itself.
void write_start_line(const std::filesystem::path& log, const std::string& output) {
  const auto ns = pid_namespace_inode();
  std::ofstream(log, std::ios::app) << "1700000000000\t" << ::getpid() << ":" << ns.value_or(0) << "\t" << output
                                    << "\n";
}

void wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

// A compile in archbuild's own PID namespace: running while its process lives.
TEST_F(StepLogTest, ACompileRunsUntilItsProcessEnds) {
  const auto log = fresh_log("own.log");
  StepLog steps(log);
  int release[2], ready[2];
  ASSERT_EQ(::pipe(release), 0);
  ASSERT_EQ(::pipe(ready), 0);
  pid_t compile = ::fork();
  ASSERT_GE(compile, 0);
  if (compile == 0) {
    ::close(release[1]);
    write_start_line(log, "/w/build/a.o");
    [[maybe_unused]] auto sent = ::write(ready[1], "y", 1);
    char byte;
    [[maybe_unused]] auto got = ::read(release[0], &byte, 1);
    ::_exit(0);
  }
  ::close(release[0]);
  ::close(ready[1]);
  char byte = 0;
  [[maybe_unused]] auto got = ::read(ready[0], &byte, 1);
  ::close(ready[0]);
  ProgressState state;
  steps.poll(state);
  ASSERT_EQ(state.running.count("/w/build/a.o"), 1u);
  steps.poll(state);
  EXPECT_EQ(state.running.count("/w/build/a.o"), 1u) << "still running";
  ::close(release[1]);
  wait_for(compile);
  steps.poll(state);
  EXPECT_TRUE(state.running.empty()) << "ended";
}

// The step supervisor's PID namespace: the compile calls itself pid 1 (or a
// few more), a pid that here belongs to init or a kernel thread, alive for
// ever. It is found through its NSpid instead and ends with its process.
TEST_F(StepLogTest, ACompileInThePidNamespaceOfTheStepEndsWithItsProcess) {
  const auto log = fresh_log("namespace.log");
  StepLog steps(log);
  int release[2], ready[2];
  ASSERT_EQ(::pipe(release), 0);
  ASSERT_EQ(::pipe(ready), 0);
  pid_t supervisor = ::fork();
  ASSERT_GE(supervisor, 0);
  if (supervisor == 0) {
    ::close(release[1]);
    ::close(ready[0]);
    char verdict = 'n';
    if (::unshare(CLONE_NEWPID) != 0) {
      [[maybe_unused]] auto sent = ::write(ready[1], &verdict, 1);
      ::_exit(0);
    }
    pid_t compile = ::fork();
    if (compile == 0) {
      write_start_line(log, "/w/build/b.o");
      verdict = 'y';
      [[maybe_unused]] auto sent = ::write(ready[1], &verdict, 1);
      char byte;
      [[maybe_unused]] auto got = ::read(release[0], &byte, 1);
      ::_exit(0);
    }
    wait_for(compile);
    ::_exit(0);
  }
  ::close(release[0]);
  ::close(ready[1]);
  char verdict = 'n';
  [[maybe_unused]] auto got = ::read(ready[0], &verdict, 1);
  ::close(ready[0]);
  if (verdict != 'y') {
    ::close(release[1]);
    wait_for(supervisor);
    GTEST_SKIP() << "unshare(CLONE_NEWPID) is refused here: no PID namespace to test in";
  }
  ProgressState state;
  steps.poll(state);
  ASSERT_EQ(state.running.count("/w/build/b.o"), 1u) << "running while its process lives";
  steps.poll(state);
  EXPECT_EQ(state.running.count("/w/build/b.o"), 1u);
  ::close(release[1]);
  wait_for(supervisor);
  steps.poll(state);
  EXPECT_TRUE(state.running.empty()) << "ended: its pid 1 here is init's";
}

TEST(StepLog, ProcessesOfAnotherNamespaceAreNotMistakenForOnesHere) {
  const auto own = pid_namespace_inode();
  ASSERT_TRUE(own.has_value());
  // In this namespace, NSpid has one field: nothing is found for a namespace
  // no process is in.
  EXPECT_TRUE(outer_pids(*own + 1, {static_cast<int>(::getpid())}).empty());
}

}  // namespace
}  // namespace archbuild
