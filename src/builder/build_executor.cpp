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
#include "core/error.h"
#include "core/interrupt.h"
#include "core/json_text.h"
#include "core/regular_file.h"
#include "core/strings.h"
#include "process/host_sockets.h"

namespace archbuild {

namespace {

// Reads the step launcher's start events appended since the last call.
class StepLog {
 public:
  explicit StepLog(std::filesystem::path path) : path_(std::move(path)) { std::filesystem::remove(path_, ignored_); }
  const std::filesystem::path& path() const { return path_; }
  void poll(ProgressState& state) {
    std::ifstream in(path_);
    if (!in) return;
    in.seekg(static_cast<std::streamoff>(offset_));
    std::string line;
    auto now_steady = std::chrono::steady_clock::now();
    long long now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
    while (std::getline(in, line)) {
      if (in.eof()) break;  // a partial line: read it next time
      offset_ += line.size() + 1;
      // "<ms>\t<pid>\t<output>" (older launchers: "<ms>\t<output>")
      auto fields = split_fields(line);
      if (fields.size() < 2 || fields.back().empty()) continue;
      long long started_ms = std::atoll(fields.front().c_str());
      const auto& output = fields.back();
      state.running[output] = now_steady - std::chrono::milliseconds(std::max(0LL, now_ms - started_ms));
      if (fields.size() == 3) pids_[output] = std::atoi(fields[1].c_str());
      if (state.phase == BuildPhase::starting || state.phase == BuildPhase::configure)
        state.phase = BuildPhase::compile;
    }
    // A compile whose process has ended is no longer running (setuptools
    // prints a compile's command before it runs and nothing after).
    for (auto it = pids_.begin(); it != pids_.end();) {
      if (it->second > 0 && ::kill(it->second, 0) != 0 && errno == ESRCH) {
        state.running.erase(it->first);
        it = pids_.erase(it);
      } else {
        ++it;
      }
    }
  }

 private:
  static std::vector<std::string> split_fields(const std::string& line) {
    std::vector<std::string> fields;
    size_t start = 0;
    for (size_t tab; fields.size() < 2 && (tab = line.find('\t', start)) != std::string::npos; start = tab + 1)
      fields.push_back(line.substr(start, tab - start));
    fields.push_back(line.substr(start));  // the output path may hold anything but a newline
    return fields;
  }

  std::filesystem::path path_;
  std::map<std::string, int> pids_;  // running outputs by compile pid
  uint64_t offset_ = 0;
  std::error_code ignored_;
};

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

BuildResult execute_build(const BuildPlan& plan, BuildProgressSink& status, CommandRunner& runner) {
  BuildResult result;
  // Interrupted before anything ran: the work tree stays as it was (stale
  // outputs kept, no configure stamp for a configure that never happened).
  if (int signal = pending_interrupt()) {
    result.interrupted = true;
    result.attempts.push_back({plan.jobs.jobs, AttemptOutcome::interrupted,
                               std::string("interrupted by ") + (signal == SIGTERM ? "SIGTERM" : "SIGINT"), 0});
    return result;
  }
  // Wheels of an earlier build in this out dir (published, or quarantined)
  // must not be taken for this build's.
  std::error_code ec;
  std::filesystem::remove_all(plan.wheel_dir, ec);
  std::filesystem::create_directories(plan.wheel_dir);
  std::filesystem::create_directories(plan.out_dir / "tmp");
  std::optional<BuildLogFile> opened;
  try {
    opened.emplace(plan.log_path);
  } catch (const std::filesystem::filesystem_error& error) {
    fail_environment("cannot write the build log " + plan.log_path.string() + ": " + error.code().message());
  }
  auto& log = *opened;
  auto started = std::chrono::steady_clock::now();
  auto started_file_time = std::filesystem::file_time_type::clock::now();
  double self_cpu_before = cpu_seconds(RUSAGE_SELF);
  double children_cpu_before = cpu_seconds(RUSAGE_CHILDREN);

  auto ninja_logs_before = ninja_log_sizes(plan.source_dir);
  for (const auto& stale : plan.configure.stale_outputs) {
    std::filesystem::remove_all(stale, ec);
    if (ec) fail_environment("cannot remove the stale setuptools output " + stale.string() + ": " + ec.message());
    log << "==> archbuild: removed " << stale.string() << " (" << plan.configure.reason
        << "; setuptools would reuse it)\n";
  }
  // From here on the build dir is configured with these inputs: a rerun with
  // the same ones resumes incrementally, other ones get CMAKE_FRESH=1.
  record_configure_inputs(plan);
  std::filesystem::remove(plan.enforcement.nvcc_log, ec);  // this build's nvcc calls only
  BuildPlan attempt_plan = plan;                           // an OOM retry: the same plan at fewer jobs
  while (true) {
    const unsigned jobs = attempt_plan.jobs.jobs;
    BuildAttempt attempt;
    attempt.jobs = jobs;
    auto attempt_start = std::chrono::steady_clock::now();
    GroupRunSpec spec;
    spec.argv = attempt_plan.argv;
    spec.env = attempt_plan.env;  // exactly what `archbuild plan` prints, launchers and step log included
    spec.working_dir = plan.source_dir;
    spec.contain = true;  // nothing the step starts outlives it
    if (plan.network.isolation != NetworkIsolation::unavailable) {
      spec.network = NetworkIsolationSetup::for_mode(plan.network.isolation);
      spec.network->hidden_sockets = host_socket_paths();  // as the host has them now
    }
    StepLog steps(plan.launchers.step_log);
    log << "==> archbuild: running with " << jobs << " jobs in " << plan.source_dir.string() << "\n";
    log.flush();

    ProgressState progress;
    progress.start = started;
    progress.predicted_seconds = plan.forecast.seconds;
    FirstErrorFinder first_error;
    bool oom = false;
    auto outcome = runner.run(
        spec,
        [&](std::string_view line, bool) {
          log << line << '\n';
          feed_progress(line, progress, std::chrono::steady_clock::now());
          first_error.feed(line);
          if (is_oom_line(line)) oom = true;
        },
        [&] {
          log.flush();  // the log trails the build by one tick at most (tail -f works)
          steps.poll(progress);
          status.progress(describe_progress(progress, std::chrono::steady_clock::now()));
        });
    log.flush();
    status.finished();
    oom = oom || (outcome.status.signaled && outcome.status.signal == SIGKILL) || outcome.status.code == 137;
    attempt.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - attempt_start).count();
    if (outcome.interrupted) {
      attempt.outcome = AttemptOutcome::interrupted;
      attempt.status = outcome.describe();
      result.attempts.push_back(attempt);
      result.interrupted = true;
      log << "==> archbuild: " << outcome.describe()
          << "; the whole process group was stopped, the build dir is kept\n";
      break;
    }
    bool ok = outcome.succeeded();
    if (!ok && oom && jobs > 1) {
      attempt.outcome = AttemptOutcome::oom;
      attempt.status = outcome.describe();
      result.attempts.push_back(attempt);
      ++result.oom_retries;
      unsigned next = std::max(1u, jobs / 2);
      log << "==> archbuild: a compiler was killed for lack of memory (OOM) at " << jobs << " jobs; retrying with "
          << next << " jobs, continuing the incremental build\n";
      status.note("archbuild: out of memory at " + std::to_string(jobs) + " jobs; retrying with " +
                  std::to_string(next));
      attempt_plan = plan.with_jobs(next);
      continue;
    }
    attempt.outcome = ok ? AttemptOutcome::ok : oom ? AttemptOutcome::oom_at_one_job : AttemptOutcome::failed;
    attempt.status = outcome.describe();
    result.attempts.push_back(attempt);
    result.ok = ok;
    if (!ok) {
      result.error_excerpt = first_error.excerpt();
      result.failing_command = plan.launchers.without_step_launcher(first_error.failing_command());
      result.failed_target = first_error.failed_target();
    }
    break;
  }

  log.flush();
  if (!log.error().empty() && result.ok) {
    result.ok = false;
    result.error_excerpt = {"cannot write the build log: " + log.error()};
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  result.archbuild_cpu_seconds = cpu_seconds(RUSAGE_SELF) - self_cpu_before;
  result.build_cpu_seconds = cpu_seconds(RUSAGE_CHILDREN) - children_cpu_before;
  struct rusage self {};
  if (::getrusage(RUSAGE_SELF, &self) == 0)
    result.archbuild_peak_rss_bytes = static_cast<uint64_t>(self.ru_maxrss) * 1024;
  if (result.ok) {
    result.wheels = wheels_in(plan.wheel_dir, started_file_time);
    if (result.wheels.empty()) {
      result.ok = false;
      result.error_excerpt = {"the build succeeded but wrote no wheel to " + plan.wheel_dir.string()};
    }
  }
  result.enforcement = read_arch_enforcement(plan.enforcement.nvcc_log, plan.enforcement.on);
  log << "==> archbuild: arch enforcement: " << result.enforcement.summary() << "\n";
  for (const auto& change : result.enforcement.changes)
    log << "==> archbuild: nvcc " << (change.output.empty() ? "(no -o)" : change.output) << ": "
        << (change.reason.empty()
                ? (change.before.empty() ? "(no target flags)" : change.before) + " -> " + change.after
                : "left as the project wrote it: " + change.reason)
        << "\n";
  std::vector<NinjaStep> steps;
  for (const auto& ninja_log : find_ninja_logs(plan.source_dir, started_file_time)) {
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
      write_file_atomically(plan.trace_path, json_text(chrome_trace(steps), -1) + "\n");
      result.trace_written = true;
    } catch (const std::filesystem::filesystem_error&) {
      // the trace is an aid, not the build: the report says there is none
    }
    result.slowest = slowest_steps(steps, 10);
  }
  result.steps = std::move(steps);
  return result;
}

}  // namespace archbuild
