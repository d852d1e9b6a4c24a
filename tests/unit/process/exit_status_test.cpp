#include "process/exit_status.h"

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <gtest/gtest.h>

#include "process/process_group_runner.h"
#include "process/run_process.h"

using namespace archbuild;

namespace {
// The wait status of a real child that runs `body`.
template <typename Body>
int wait_status_of(Body body) {
  pid_t pid = ::fork();
  if (pid == 0) {
    body();
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}
}  // namespace

TEST(ExitStatus, DecodesAnExit) {
  auto status = ExitStatus::from_wait_status(wait_status_of([] { ::_exit(2); }));
  EXPECT_FALSE(status.signaled);
  EXPECT_EQ(status.code, 2);
  EXPECT_FALSE(status.succeeded());
  EXPECT_EQ(status.shell_code(), 2);
  EXPECT_EQ(status.describe(), "exit 2");
  EXPECT_TRUE(ExitStatus::from_wait_status(wait_status_of([] {})).succeeded());
}

TEST(ExitStatus, DecodesASignal) {
  auto status = ExitStatus::from_wait_status(wait_status_of([] { ::raise(SIGKILL); }));
  EXPECT_TRUE(status.signaled);
  EXPECT_EQ(status.signal, SIGKILL);
  EXPECT_FALSE(status.succeeded());
  EXPECT_EQ(status.shell_code(), 137);
  EXPECT_EQ(status.describe(), "killed by signal 9 (Killed)");
}

TEST(ExitStatus, DefaultIsNotSuccess) {
  EXPECT_FALSE(ExitStatus{}.succeeded());
  EXPECT_EQ(ExitStatus{}.describe(), "exit -1");
}

TEST(ExitStatus, ProcessResultAndGroupOutcomeSayTheSame) {
  ProcessResult result;
  result.status = ExitStatus::exited(1);
  EXPECT_EQ(result.describe_status(), "exit 1");
  result.status = ExitStatus::killed(SIGKILL);
  EXPECT_EQ(result.describe_status(), "killed by signal 9 (Killed)");
  result.timed_out = true;
  EXPECT_EQ(result.describe_status(), "timed out");
  EXPECT_FALSE(result.succeeded());

  GroupRunOutcome outcome;
  outcome.status = ExitStatus::exited(1);
  EXPECT_EQ(outcome.describe(), "exit 1");
  outcome.status = ExitStatus::killed(SIGKILL);
  EXPECT_EQ(outcome.describe(), "killed by signal 9 (Killed)");
  outcome.interrupted = true;
  outcome.interrupt_signal = SIGINT;
  EXPECT_EQ(outcome.describe(), "interrupted by SIGINT");
  outcome.interrupt_signal = SIGTERM;
  EXPECT_EQ(outcome.describe(), "interrupted by SIGTERM");
  EXPECT_FALSE(outcome.succeeded());
}

TEST(ExitStatus, FromRunProcess) {
  auto exited = run_process({"sh", "-c", "exit 3"});
  EXPECT_EQ(exited.status.code, 3);
  EXPECT_EQ(exited.describe_status(), "exit 3");
  auto killed = run_process({"sh", "-c", "kill -9 $$"});
  EXPECT_TRUE(killed.status.signaled);
  EXPECT_EQ(killed.describe_status(), "killed by signal 9 (Killed)");
  EXPECT_TRUE(run_process({"true"}).succeeded());
}
