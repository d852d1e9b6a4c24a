#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "builder/arch_enforcement.h"
#include "builder/build_plan.h"
#include "builder/build_progress_sink.h"
#include "builder/ninja_trace.h"
#include "process/command_runner.h"

namespace archbuild {

// How one run of the build command ended.
enum class AttemptOutcome {
  ok,
  failed,  // a non-zero exit or a signal, not for lack of memory
  oom,     // a compiler was killed for lack of memory (retried with fewer jobs while jobs > 1)
  oom_at_one_job,
  interrupted,  // archbuild got SIGINT/SIGTERM and stopped the build
};

struct BuildAttempt {
  unsigned jobs = 0;
  AttemptOutcome outcome = AttemptOutcome::failed;
  std::string status;  // the process's end: "exit 1", "interrupted by SIGINT"
  double seconds = 0;
  // "ok", "oom", "exit 1", "oom at 1 job: exit 1", "interrupted by SIGINT"
  std::string describe() const;
};

struct BuildResult {
  bool ok = false;
  bool interrupted = false;
  std::vector<BuildAttempt> attempts;  // more than one: OOM retries
  unsigned oom_retries = 0;
  std::vector<std::string> wheels;
  double seconds = 0;
  double archbuild_cpu_seconds = 0;        // archbuild itself while driving the build
  double build_cpu_seconds = 0;            // every process of the build
  uint64_t archbuild_peak_rss_bytes = 0;   // archbuild's own, by the end of the build
  std::vector<std::string> error_excerpt;  // the first real error, with context
  std::string failing_command;
  std::string failed_target;
  std::vector<NinjaStep> slowest;  // ten slowest steps
  std::vector<NinjaStep> steps;    // every step of .ninja_log this build added
  bool trace_written = false;
  ArchEnforcement enforcement;  // what the nvcc calls did with the asked targets

  nlohmann::json to_json(const BuildPlan& plan) const;
};

// Runs the plan: the whole output to the log, a status line, OOM detection
// with automatic retries at half the jobs (continuing the incremental build)
// down to one job, the trace and slowest steps from .ninja_log, and the first
// real error when it fails. A SIGINT/SIGTERM stops the build's whole process
// group; the build dir stays resumable. Each attempt runs plan.argv with
// exactly plan.env (a retry runs plan.with_jobs(n)) through `runner`.
BuildResult execute_build(const BuildPlan& plan, BuildProgressSink& status, CommandRunner& runner);
// The same with the real runner (ProcessGroupRunner).
BuildResult execute_build(const BuildPlan& plan, BuildProgressSink& status);

}  // namespace archbuild
