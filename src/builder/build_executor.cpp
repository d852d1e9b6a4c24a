#include "builder/build_executor.h"

#include <sys/resource.h>

#include <cerrno>
#include <csignal>
#include <fstream>
#include <map>
#include <optional>
#include <type_traits>

#include "builder/build_log.h"
#include "builder/progress.h"
#include "builder/step_launcher.h"
#include "builder/step_log.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "core/json_text.h"
#include "core/regular_file.h"
#include "core/strings.h"
#include "process/host_sockets.h"

namespace archbuild {

namespace {

// The build log, appended through core's checked writer and flushed once a
// tick. A write that fails (a full disk) never throws into the running
// build, whose process group must still be stopped as usual: it is kept,
// and the build is failed with it once the attempt has ended.
class BuildLogFile {
 public:
  explicit BuildLogFile(const std::filesystem::path& path) : file_(OutputFile::append(path)) {}
  template <typename T>
  BuildLogFile& operator<<(const T& value) {
    if constexpr (std::is_convertible_v<const T&, std::string_view>)
      pending_ += std::string_view(value);
    else if constexpr (std::is_same_v<T, char>)
      pending_ += value;
    else
      pending_ += std::to_string(value);
    return *this;
  }
  void flush() noexcept {
    if (pending_.empty() || !error_.empty()) return;
    try {
      file_.write(pending_);
    } catch (const std::exception& error) {
      error_ = error.what();
    }
    pending_.clear();
  }
  // Why the log could not be written, or "".
  const std::string& error() const { return error_; }
  ~BuildLogFile() {
    flush();
    try {
      file_.close();
    } catch (const std::exception&) {
      // the build's own result stands; the log's end is lost
    }
  }

 private:
  OutputFile file_;
  std::string pending_;
  std::string error_;
};

double cpu_seconds(int who) {
  rusage usage{};
  getrusage(who, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec + (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

std::vector<std::string> wheels_in(const std::filesystem::path& dir, std::filesystem::file_time_type since) {
  std::vector<std::string> wheels;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.path().extension() == ".whl" && entry.last_write_time(ec) >= since)
      wheels.push_back(entry.path().string());
  std::sort(wheels.begin(), wheels.end());
  return wheels;
}

}  // namespace

std::string BuildAttempt::describe() const {
  switch (outcome) {
    case AttemptOutcome::ok: return "ok";
    case AttemptOutcome::oom: return "oom";
    case AttemptOutcome::oom_at_one_job: return "oom at 1 job: " + status;
    case AttemptOutcome::failed:
    case AttemptOutcome::interrupted: return status;
  }
  return status;
}

nlohmann::json BuildResult::to_json(const BuildPlan& plan) const {
  auto attempt_list = nlohmann::json::array();
  for (const auto& a : attempts)
    attempt_list.push_back({{"jobs", a.jobs}, {"outcome", a.describe()}, {"seconds", a.seconds}});
  auto slow = nlohmann::json::array();
  for (const auto& step : slowest) slow.push_back({{"target", step.target}, {"seconds", step.duration_ms() / 1000.0}});
  return {{"ok", ok},
          {"interrupted", interrupted},
          {"attempts", attempt_list},
          {"oom_retries", oom_retries},
          {"wheels", wheels},
          {"seconds", seconds},
          {"archbuild_cpu_seconds", archbuild_cpu_seconds},
          {"build_cpu_seconds", build_cpu_seconds},
          {"archbuild_peak_rss_bytes", archbuild_peak_rss_bytes},
          {"first_error", error_excerpt},
          {"failing_command", failing_command},
          {"failed_target", failed_target},
          {"slowest", slow},
          {"log", plan.log_path.string()},
          {"trace", trace_written ? plan.trace_path.string() : ""},
          {"arch_enforcement", enforcement.to_json()}};
}

BuildResult execute_build(const BuildPlan& plan, BuildProgressSink& status) {
  ProcessGroupRunner runner;
  return execute_build(plan, status, runner);
}

namespace {

// One run of a plan's build step: the attempts (an OOM retry at fewer jobs
// continues the incremental build), then what they left (wheels, the nvcc
// arch enforcement's record, ninja's steps as a trace).
class BuildExecution {
 public:
  BuildExecution(const BuildPlan& plan, BuildProgressSink& status, CommandRunner& runner)
      : plan_(plan), status_(status), runner_(runner) {}

  BuildResult run() {
    // Interrupted before anything ran: the work tree stays as it was (stale
    // outputs kept, no configure stamp for a configure that never happened).
    if (int signal = pending_interrupt()) {
      result_.interrupted = true;
      result_.attempts.push_back({plan_.jobs.jobs, AttemptOutcome::interrupted,
                                  std::string("interrupted by ") + (signal == SIGTERM ? "SIGTERM" : "SIGINT"), 0});
      return std::move(result_);
    }
    open_log();
    started_ = std::chrono::steady_clock::now();
    started_file_time_ = std::filesystem::file_time_type::clock::now();
    const double self_cpu_before = cpu_seconds(RUSAGE_SELF), children_cpu_before = cpu_seconds(RUSAGE_CHILDREN);
    const auto ninja_logs_before = ninja_log_sizes(plan_.source_dir);
    prepare_build_dir();
    BuildPlan attempt_plan = plan_;  // an OOM retry: the same plan at fewer jobs
    while (run_attempt(attempt_plan)) attempt_plan = plan_.with_jobs(std::max(1u, attempt_plan.jobs.jobs / 2));
    if (configure_settled_) record_configure_inputs(plan_);
    log_->flush();
    if (!log_->error().empty() && result_.ok) {
      result_.ok = false;
      result_.error_excerpt = {"cannot write the build log: " + log_->error()};
    }
    measure(self_cpu_before, children_cpu_before);
    if (result_.ok) collect_wheels();
    record_enforcement();
    collect_ninja_steps(ninja_logs_before);
    return std::move(result_);
  }

 private:
  // Wheels of an earlier build in this out dir (published, or quarantined)
  // must not be taken for this build's.
  void open_log() {
    std::error_code ec;
    std::filesystem::remove_all(plan_.wheel_dir, ec);
    std::filesystem::create_directories(plan_.wheel_dir);
    std::filesystem::create_directories(plan_.out_dir / "tmp");
    try {
      log_.emplace(plan_.log_path);
    } catch (const std::filesystem::filesystem_error& error) {
      fail_environment("cannot write the build log " + plan_.log_path.string() + ": " + error.code().message());
    }
  }

  void prepare_build_dir() {
    std::error_code ec;
    for (const auto& stale : plan_.configure.stale_outputs) {
      std::filesystem::remove_all(stale, ec);
      if (ec) fail_environment("cannot remove the stale setuptools output " + stale.string() + ": " + ec.message());
      *log_ << "==> archbuild: removed " << stale.string() << " (" << plan_.configure.reason
            << "; setuptools would reuse it)\n";
    }
    // From here on the build dir is configured with these inputs: a rerun
    // with the same ones resumes incrementally, other ones get CMAKE_FRESH=1.
    // A fresh configure is settled only once the step compiles (or ends on
    // its own): stopped before, CMake's cache may still hold the old inputs.
    record_configure_inputs(plan_, /*settled=*/!plan_.configure.fresh);
    std::filesystem::remove(plan_.enforcement.nvcc_log, ec);  // this build's nvcc calls only
  }

  GroupRunSpec step_spec(const BuildPlan& attempt_plan) const {
    GroupRunSpec spec;
    spec.argv = attempt_plan.argv;
    spec.env = attempt_plan.env;  // exactly what `archbuild plan` prints, launchers and step log included
    spec.working_dir = plan_.source_dir;
    spec.contain = true;  // nothing the step starts outlives it
    if (plan_.network.isolation != NetworkIsolation::unavailable) {
      spec.network = NetworkIsolationSetup::for_mode(plan_.network.isolation);
      spec.network->hidden_sockets = host_socket_paths();  // as the host has them now
    }
    return spec;
  }

  // One attempt; true when it ran out of memory and is to be tried again at fewer jobs.
  bool run_attempt(const BuildPlan& attempt_plan) {
    const unsigned jobs = attempt_plan.jobs.jobs;
    BuildAttempt attempt;
    attempt.jobs = jobs;
    const auto attempt_start = std::chrono::steady_clock::now();
    StepLog steps(plan_.launchers.step_log);
    *log_ << "==> archbuild: running with " << jobs << " jobs in " << plan_.source_dir.string() << "\n";
    log_->flush();
    ProgressState progress;
    progress.start = started_;
    progress.predicted_seconds = plan_.forecast.seconds;
    FirstErrorFinder first_error;
    bool oom = false;
    auto outcome = runner_.run(
        step_spec(attempt_plan),
        [&](std::string_view line, bool) {
          *log_ << line << '\n';
          feed_progress(line, progress, std::chrono::steady_clock::now());
          first_error.feed(line);
          if (is_oom_line(line)) oom = true;
        },
        [&] {
          log_->flush();  // the log trails the build by one tick at most (tail -f works)
          steps.poll(progress);
          status_.progress(describe_progress(progress, std::chrono::steady_clock::now()));
        });
    log_->flush();
    status_.finished();
    oom = oom || (outcome.status.signaled && outcome.status.signal == SIGKILL) || outcome.status.code == 137;
    // Compiling, or ended on its own: the configure ran with these inputs.
    configure_settled_ = configure_settled_ || !outcome.interrupted || progress.total > 0 ||
                         progress.compiles_started > 0 || progress.percent.has_value();
    attempt.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - attempt_start).count();
    attempt.status = outcome.describe();
    return judge_attempt(attempt, outcome, oom, first_error);
  }

  bool judge_attempt(BuildAttempt attempt, const GroupRunOutcome& outcome, bool oom, const FirstErrorFinder& error) {
    const unsigned jobs = attempt.jobs;
    if (outcome.interrupted) {
      attempt.outcome = AttemptOutcome::interrupted;
      result_.attempts.push_back(attempt);
      result_.interrupted = true;
      *log_ << "==> archbuild: " << outcome.describe()
            << "; the whole process group was stopped, the build dir is kept\n";
      return false;
    }
    const bool ok = outcome.succeeded();
    if (!ok && oom && jobs > 1) {
      attempt.outcome = AttemptOutcome::oom;
      result_.attempts.push_back(attempt);
      ++result_.oom_retries;
      const unsigned next = std::max(1u, jobs / 2);
      *log_ << "==> archbuild: a compiler was killed for lack of memory (OOM) at " << jobs << " jobs; retrying with "
            << next << " jobs, continuing the incremental build\n";
      status_.note("archbuild: out of memory at " + std::to_string(jobs) + " jobs; retrying with " +
                   std::to_string(next));
      return true;
    }
    attempt.outcome = ok ? AttemptOutcome::ok : oom ? AttemptOutcome::oom_at_one_job : AttemptOutcome::failed;
    result_.attempts.push_back(attempt);
    result_.ok = ok;
    if (!ok) {
      result_.error_excerpt = error.excerpt();
      result_.failing_command = plan_.launchers.without_step_launcher(error.failing_command());
      result_.failed_target = error.failed_target();
    }
    return false;
  }

  void measure(double self_cpu_before, double children_cpu_before) {
    result_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    result_.archbuild_cpu_seconds = cpu_seconds(RUSAGE_SELF) - self_cpu_before;
    result_.build_cpu_seconds = cpu_seconds(RUSAGE_CHILDREN) - children_cpu_before;
    struct rusage self {};
    if (::getrusage(RUSAGE_SELF, &self) == 0)
      result_.archbuild_peak_rss_bytes = static_cast<uint64_t>(self.ru_maxrss) * 1024;
  }

  void collect_wheels() {
    result_.wheels = wheels_in(plan_.wheel_dir, started_file_time_);
    if (result_.wheels.empty()) {
      result_.ok = false;
      result_.error_excerpt = {"the build succeeded but wrote no wheel to " + plan_.wheel_dir.string()};
    }
  }

  void record_enforcement() {
    result_.enforcement = read_arch_enforcement(plan_.enforcement.nvcc_log, plan_.enforcement.on);
    *log_ << "==> archbuild: arch enforcement: " << result_.enforcement.summary() << "\n";
    for (const auto& change : result_.enforcement.changes)
      *log_ << "==> archbuild: nvcc " << (change.output.empty() ? "(no -o)" : change.output) << ": "
            << (change.reason.empty()
                    ? (change.before.empty() ? "(no target flags)" : change.before) + " -> " + change.after
                    : "left as the project wrote it: " + change.reason)
            << "\n";
  }

  // ninja's steps of this build (the logs' new lines) as a Chrome trace and the slowest ten.
  void collect_ninja_steps(const std::map<std::filesystem::path, uint64_t>& ninja_logs_before) {
    std::vector<NinjaStep> steps;
    for (const auto& ninja_log : find_ninja_logs(plan_.source_dir, started_file_time_)) {
      std::error_code ec;
      auto before = ninja_logs_before.find(ninja_log);
      uint64_t offset = before != ninja_logs_before.end() && std::filesystem::file_size(ninja_log, ec) >= before->second
                            ? before->second
                            : 0;  // new, or rewritten (recompacted) by ninja
      auto found = read_ninja_log(ninja_log, offset);
      steps.insert(steps.end(), found.begin(), found.end());
    }
    if (!steps.empty()) {
      try {
        write_file_atomically(plan_.trace_path, json_text(chrome_trace(steps), -1) + "\n");
        result_.trace_written = true;
      } catch (const std::filesystem::filesystem_error&) {
        // the trace is an aid, not the build: the report says there is none
      }
      result_.slowest = slowest_steps(steps, 10);
    }
    result_.steps = std::move(steps);
  }

  const BuildPlan& plan_;
  BuildProgressSink& status_;
  CommandRunner& runner_;
  BuildResult result_;
  std::optional<BuildLogFile> log_;
  std::chrono::steady_clock::time_point started_;
  std::filesystem::file_time_type started_file_time_;
  bool configure_settled_ = false;
};

}  // namespace

BuildResult execute_build(const BuildPlan& plan, BuildProgressSink& status, CommandRunner& runner) {
  return BuildExecution(plan, status, runner).run();
}

}  // namespace archbuild
