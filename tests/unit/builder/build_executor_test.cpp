#include "builder/build_executor.h"

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "builder/build_plan.h"
#include "builder/step_launcher.h"
#include "process/command_runner.h"

using namespace archbuild;

namespace {

// What one attempt prints and how it ends.
struct ScriptedRun {
  std::vector<std::string> lines;
  GroupRunOutcome outcome;
  std::string wheel;  // a file name the "build" writes into the wheel dir
};

GroupRunOutcome ended(ExitStatus status) {
  GroupRunOutcome outcome;
  outcome.status = status;
  return outcome;
}

// Plays back scripted attempts instead of starting processes, and records
// every spec it was given.
class FakeCommandRunner : public CommandRunner {
 public:
  FakeCommandRunner(std::filesystem::path wheel_dir, std::vector<ScriptedRun> script)
      : wheel_dir_(std::move(wheel_dir)), script_(std::move(script)) {}

  GroupRunOutcome run(const GroupRunSpec& spec, const LineHandler& on_line, const TickHandler& on_tick) override {
    specs.push_back(spec);
    if (specs.size() > script_.size()) {
      ADD_FAILURE() << "an attempt more than scripted";
      return ended(ExitStatus::exited(99));
    }
    const auto& step = script_[specs.size() - 1];
    for (const auto& line : step.lines) on_line(line, true);
    if (on_tick) on_tick();
    if (!step.wheel.empty()) {
      auto wheel = wheel_dir_ / step.wheel;
      std::ofstream(wheel) << "PK";
      // Coarse file clocks may stamp it before the build's start: make it plainly newer.
      std::filesystem::last_write_time(wheel, std::filesystem::file_time_type::clock::now() + std::chrono::seconds(1));
    }
    return step.outcome;
  }

  std::vector<GroupRunSpec> specs;

 private:
  std::filesystem::path wheel_dir_;
  std::vector<ScriptedRun> script_;
};

// What the executor showed: its snapshots and notes, nothing painted.
struct RecordingProgress : BuildProgressSink {
  void progress(const StatusText& snapshot) override { snapshots.push_back(snapshot); }
  void note(const std::string& line) override { notes.push_back(line); }
  void finished() override { ++finishes; }
  std::vector<StatusText> snapshots;
  std::vector<std::string> notes;
  int finishes = 0;
};

class BuildExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() / ("archbuild-executor-" + std::to_string(getpid()) + "-" +
                                                      ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_ / "src");
    plan_.package = "fixture";
    plan_.recipe = "fixture";
    plan_.build_system = "setup.py";
    plan_.python = "/usr/bin/python3";
    plan_.source_dir = root_ / "src";
    plan_.out_dir = root_ / "out";
    plan_.wheel_dir = plan_.out_dir / "wheels";
    plan_.log_path = plan_.out_dir / "build.log";
    plan_.trace_path = plan_.out_dir / "trace.json";
    plan_.argv = {"/usr/bin/python3", "setup.py", "bdist_wheel", "-d", plan_.wheel_dir.string()};
    set_jobs(8);
    const std::string launcher = "/opt/archbuild/bin/archbuild;" + std::string(kStepLauncherCommand) + ";ccache";
    plan_.env["CMAKE_C_COMPILER_LAUNCHER"] = launcher;
    plan_.env["CMAKE_CXX_COMPILER_LAUNCHER"] = launcher;
    plan_.env["CMAKE_CUDA_COMPILER_LAUNCHER"] = launcher;
    plan_.env["ARCHBUILD_STEP_LOG"] = (plan_.out_dir / "steps.log").string();
    plan_.env["TORCH_CUDA_ARCH_LIST"] = "9.0";
    plan_.env["CMAKE_FRESH"] = "1";
    plan_.configure.fresh = true;
    plan_.configure.env["CMAKE_FRESH"] = "1";
    plan_.launchers.step_launcher = {"/opt/archbuild/bin/archbuild", kStepLauncherCommand};
    plan_.launchers.step_log = plan_.out_dir / "steps.log";
    plan_.enforcement.on = false;
    plan_.enforcement.nvcc_log = plan_.out_dir / "nvcc.log";
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  void set_jobs(unsigned jobs) {
    plan_.jobs.jobs = jobs;
    plan_.env["MAX_JOBS"] = std::to_string(jobs);
    plan_.env["CMAKE_BUILD_PARALLEL_LEVEL"] = std::to_string(jobs);
  }
  std::map<std::string, std::string> retry_env(unsigned jobs) const {
    auto env = plan_.env;
    env["MAX_JOBS"] = std::to_string(jobs);
    env["CMAKE_BUILD_PARALLEL_LEVEL"] = std::to_string(jobs);
    env.erase("CMAKE_FRESH");
    return env;
  }
  std::string log_text() const {
    std::ifstream in(plan_.log_path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  std::filesystem::path root_;
  BuildPlan plan_;
  RecordingProgress status_;
};

}  // namespace

TEST_F(BuildExecutorTest, FirstAttemptRunsExactlyThePlan) {
  FakeCommandRunner runner(plan_.wheel_dir, {{{"[1/1] Linking CXX shared library x.so"},
                                              ended(ExitStatus::exited(0)),
                                              "fixture-1.0-cp311-cp311-linux_x86_64.whl"}});
  auto result = execute_build(plan_, status_, runner);
  ASSERT_EQ(runner.specs.size(), 1u);
  EXPECT_EQ(runner.specs[0].env, plan_.env);  // nothing added, nothing overwritten
  EXPECT_EQ(runner.specs[0].argv, plan_.argv);
  EXPECT_EQ(runner.specs[0].working_dir, plan_.source_dir);
  EXPECT_TRUE(result.ok);
  EXPECT_FALSE(result.interrupted);
  ASSERT_EQ(result.attempts.size(), 1u);
  EXPECT_EQ(result.attempts[0].jobs, 8u);
  EXPECT_EQ(result.attempts[0].describe(), "ok");
  EXPECT_EQ(result.oom_retries, 0u);
  EXPECT_NE(log_text().find("[1/1] Linking CXX shared library x.so"), std::string::npos);
}

TEST_F(BuildExecutorTest, WheelsOfThisBuildOnly) {
  std::filesystem::create_directories(plan_.wheel_dir);
  std::ofstream(plan_.wheel_dir / "fixture-0.9-cp311-cp311-linux_x86_64.whl") << "old";
  FakeCommandRunner runner(plan_.wheel_dir,
                           {{{}, ended(ExitStatus::exited(0)), "fixture-1.0-cp311-cp311-linux_x86_64.whl"}});
  auto result = execute_build(plan_, status_, runner);
  ASSERT_TRUE(result.ok);
  ASSERT_EQ(result.wheels.size(), 1u);
  EXPECT_EQ(result.wheels[0], (plan_.wheel_dir / "fixture-1.0-cp311-cp311-linux_x86_64.whl").string());
}

TEST_F(BuildExecutorTest, SuccessWithoutAWheelFails) {
  FakeCommandRunner runner(plan_.wheel_dir, {{{}, ended(ExitStatus::exited(0)), ""}});
  auto result = execute_build(plan_, status_, runner);
  EXPECT_FALSE(result.ok);
  EXPECT_TRUE(result.wheels.empty());
  ASSERT_EQ(result.error_excerpt.size(), 1u);
  EXPECT_NE(result.error_excerpt[0].find("wrote no wheel to " + plan_.wheel_dir.string()), std::string::npos);
}

TEST_F(BuildExecutorTest, OomRetriesWithHalfTheJobsDownToOne) {
  FakeCommandRunner runner(
      plan_.wheel_dir,
      {{{"c++: fatal error: Killed signal terminated program cc1plus"}, ended(ExitStatus::exited(1)), ""},
       {{}, ended(ExitStatus::killed(SIGKILL)), ""},
       {{"Out of memory: Killed process 4242 (cicc)", "ninja: build stopped"}, ended(ExitStatus::exited(137)), ""},
       {{}, ended(ExitStatus::exited(0)), "fixture-1.0-cp311-cp311-linux_x86_64.whl"}});
  auto result = execute_build(plan_, status_, runner);
  ASSERT_EQ(runner.specs.size(), 4u);
  EXPECT_EQ(runner.specs[0].env, plan_.env);
  EXPECT_EQ(runner.specs[1].env, retry_env(4));  // only the jobs change, and a retry does not reconfigure
  EXPECT_EQ(runner.specs[2].env, retry_env(2));
  EXPECT_EQ(runner.specs[3].env, retry_env(1));
  EXPECT_EQ(runner.specs[2].env, plan_.with_jobs(2).env);  // the retry is the plan's own with_jobs
  for (const auto& spec : runner.specs) EXPECT_EQ(spec.argv, plan_.argv);
  EXPECT_TRUE(result.ok);
  EXPECT_EQ(result.oom_retries, 3u);
  EXPECT_EQ(status_.notes.size(), 3u);  // one line per retry, through the sink
  EXPECT_EQ(status_.finishes, 4);       // the live line ends with every attempt
  ASSERT_EQ(result.attempts.size(), 4u);
  std::vector<unsigned> jobs;
  std::vector<std::string> outcomes;
  for (const auto& attempt : result.attempts) {
    jobs.push_back(attempt.jobs);
    outcomes.push_back(attempt.describe());
  }
  EXPECT_EQ(jobs, (std::vector<unsigned>{8, 4, 2, 1}));
  EXPECT_EQ(outcomes, (std::vector<std::string>{"oom", "oom", "oom", "ok"}));
  EXPECT_EQ(result.wheels.size(), 1u);
  auto log = log_text();
  EXPECT_NE(log.find("at 8 jobs; retrying with 4 jobs"), std::string::npos) << log;
  EXPECT_NE(log.find("at 2 jobs; retrying with 1 jobs"), std::string::npos) << log;
}

TEST_F(BuildExecutorTest, OomAtOneJobFails) {
  set_jobs(2);
  FakeCommandRunner runner(
      plan_.wheel_dir,
      {{{"nvcc error   : 'cicc' died due to signal 9 (Kill signal)"}, ended(ExitStatus::exited(1)), ""},
       {{"c++: fatal error: Killed signal terminated program cc1plus"}, ended(ExitStatus::exited(1)), ""}});
  auto result = execute_build(plan_, status_, runner);
  ASSERT_EQ(runner.specs.size(), 2u);
  EXPECT_EQ(runner.specs[1].env, retry_env(1));
  EXPECT_FALSE(result.ok);
  EXPECT_FALSE(result.interrupted);
  EXPECT_EQ(result.oom_retries, 1u);
  ASSERT_EQ(result.attempts.size(), 2u);
  EXPECT_EQ(result.attempts[0].describe(), "oom");
  EXPECT_EQ(result.attempts[1].jobs, 1u);
  EXPECT_EQ(result.attempts[1].describe(), "oom at 1 job: exit 1");
}

TEST_F(BuildExecutorTest, OtherFailureIsNotRetriedAndNamesTheError) {
  FakeCommandRunner runner(
      plan_.wheel_dir,
      {{{"[1/3] Building CXX object CMakeFiles/x.dir/a.cpp.o", "FAILED: CMakeFiles/x.dir/a.cpp.o ",
         "/opt/archbuild/bin/archbuild " + std::string(kStepLauncherCommand) + " ccache /usr/bin/c++ -c a.cpp -o a.o",
         "a.cpp:1:1: error: expected unqualified-id before 'this'", "ninja: build stopped: subcommand failed."},
        ended(ExitStatus::exited(1)),
        ""}});
  auto result = execute_build(plan_, status_, runner);
  EXPECT_EQ(runner.specs.size(), 1u);
  EXPECT_FALSE(result.ok);
  EXPECT_FALSE(result.interrupted);
  EXPECT_EQ(result.oom_retries, 0u);
  ASSERT_EQ(result.attempts.size(), 1u);
  EXPECT_EQ(result.attempts[0].describe(), "exit 1");
  EXPECT_EQ(result.failing_command, "ccache /usr/bin/c++ -c a.cpp -o a.o");  // as the user's build ran it
  EXPECT_EQ(result.failed_target, "CMakeFiles/x.dir/a.cpp.o");
  ASSERT_FALSE(result.error_excerpt.empty());
  bool has_error = false;
  for (const auto& line : result.error_excerpt)
    has_error = has_error || line.find("error: expected") != std::string::npos;
  EXPECT_TRUE(has_error);
}

TEST_F(BuildExecutorTest, InterruptStopsWithoutRetry) {
  GroupRunOutcome interrupted = ended(ExitStatus::killed(SIGTERM));
  interrupted.interrupted = true;
  interrupted.interrupt_signal = SIGINT;
  // An OOM-looking line must not turn an interrupt into a retry.
  FakeCommandRunner runner(
      plan_.wheel_dir,
      {{{"-- fixture env", "c++: fatal error: Killed signal terminated program cc1plus"}, interrupted, ""}});
  auto result = execute_build(plan_, status_, runner);
  EXPECT_EQ(runner.specs.size(), 1u);
  EXPECT_FALSE(result.ok);
  EXPECT_TRUE(result.interrupted);
  EXPECT_EQ(result.oom_retries, 0u);
  ASSERT_EQ(result.attempts.size(), 1u);
  EXPECT_EQ(result.attempts[0].describe(), "interrupted by SIGINT");
  EXPECT_NE(log_text().find("interrupted by SIGINT; the whole process group was stopped"), std::string::npos);
}

TEST_F(BuildExecutorTest, AStepStoppedBeforeItCompiledLeavesTheConfigurePending) {
  std::filesystem::create_directories(plan_.source_dir / ".git");  // a work tree: its configure inputs are recorded
  plan_.configure.inputs = {{"TORCH_CUDA_ARCH_LIST", "9.0"}};      // other inputs than the tree's: a fresh configure
  GroupRunOutcome interrupted = ended(ExitStatus::killed(SIGTERM));
  interrupted.interrupted = true;
  interrupted.interrupt_signal = SIGINT;
  // stopped in its configure: the next build with these inputs configures again
  FakeCommandRunner configuring(plan_.wheel_dir,
                                {{{"-- The CUDA compiler identification is NVIDIA"}, interrupted, ""}});
  execute_build(plan_, status_, configuring);
  auto recorded = recorded_configure_inputs(plan_.source_dir);
  ASSERT_TRUE(recorded);
  EXPECT_EQ(recorded->count(kConfigurePendingKey), 1u);
  // stopped while compiling: the configure ran, a rerun resumes
  FakeCommandRunner compiling(plan_.wheel_dir, {{{"[3/10] Building CUDA object k.cu.o"}, interrupted, ""}});
  execute_build(plan_, status_, compiling);
  EXPECT_EQ(recorded_configure_inputs(plan_.source_dir), plan_.configure.inputs);
  // a step that ended on its own settles it too
  FakeCommandRunner finished(plan_.wheel_dir, {{{}, ended(ExitStatus::exited(0)), "demo-1.0-py3-none-any.whl"}});
  execute_build(plan_, status_, finished);
  EXPECT_EQ(recorded_configure_inputs(plan_.source_dir), plan_.configure.inputs);
  // the same inputs as the tree's (no fresh configure): CMake's cache holds them, a rerun resumes
  plan_.configure.fresh = false;
  FakeCommandRunner resumed(plan_.wheel_dir, {{{"-- The CUDA compiler identification is NVIDIA"}, interrupted, ""}});
  execute_build(plan_, status_, resumed);
  EXPECT_EQ(recorded_configure_inputs(plan_.source_dir), plan_.configure.inputs);
}
