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

// A compile that has written its start line and runs until released: forked
// here, or (in_new_namespace) as the first process of a PID namespace of its
// own, as under the step supervisor.
class HeldCompile {
 public:
  HeldCompile(const std::filesystem::path& log, const std::string& output, bool in_new_namespace) {
    int ready[2];
    if (::pipe(release_) != 0 || ::pipe(ready) != 0) return;
    child_ = ::fork();
    if (child_ == 0) {
      ::close(release_[1]);
      ::close(ready[0]);
      if (in_new_namespace && ::unshare(CLONE_NEWPID) != 0) ::_exit(0);  // says nothing: not started
      const pid_t compile = in_new_namespace ? ::fork() : 0;
      if (compile == 0) {
        write_start_line(log, output);
        [[maybe_unused]] auto sent = ::write(ready[1], "y", 1);
        char byte;
        [[maybe_unused]] auto got = ::read(release_[0], &byte, 1);
        ::_exit(0);
      }
      wait_for(compile);
      ::_exit(0);
    }
    ::close(release_[0]);
    ::close(ready[1]);
    char verdict = 'n';
    [[maybe_unused]] auto got = ::read(ready[0], &verdict, 1);
    ::close(ready[0]);
    started_ = child_ > 0 && verdict == 'y';
  }
  ~HeldCompile() { end(); }
  bool started() const { return started_; }
  // Lets it exit, and reaps it.
  void end() {
    if (child_ <= 0) return;
    ::close(release_[1]);
    wait_for(child_);
    child_ = -1;
  }

 private:
  int release_[2] = {-1, -1};
  pid_t child_ = -1;
  bool started_ = false;
};

// A compile in archbuild's own PID namespace: running while its process lives.
TEST_F(StepLogTest, ACompileRunsUntilItsProcessEnds) {
  const auto log = fresh_log("own.log");
  StepLog steps(log);
  HeldCompile compile(log, "/w/build/a.o", false);
  ASSERT_TRUE(compile.started());
  ProgressState state;
  steps.poll(state);
  ASSERT_EQ(state.running.count("/w/build/a.o"), 1u);
  steps.poll(state);
  EXPECT_EQ(state.running.count("/w/build/a.o"), 1u) << "still running";
  compile.end();
  steps.poll(state);
  EXPECT_TRUE(state.running.empty()) << "ended";
}

// The step supervisor's PID namespace: the compile calls itself pid 1 (or a
// few more), a pid that here belongs to init or a kernel thread, alive for
// ever. It is found through its NSpid instead and ends with its process.
TEST_F(StepLogTest, ACompileInThePidNamespaceOfTheStepEndsWithItsProcess) {
  const auto log = fresh_log("namespace.log");
  StepLog steps(log);
  HeldCompile compile(log, "/w/build/b.o", true);
  if (!compile.started()) GTEST_SKIP() << "unshare(CLONE_NEWPID) is refused here: no PID namespace to test in";
  ProgressState state;
  steps.poll(state);
  ASSERT_EQ(state.running.count("/w/build/b.o"), 1u) << "running while its process lives";
  steps.poll(state);
  EXPECT_EQ(state.running.count("/w/build/b.o"), 1u);
  compile.end();
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
