#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "build/build_plan.h"
#include "build/ninja_trace.h"
#include "ui/status_line.h"

namespace archbuild {

struct BuildAttempt {
  unsigned jobs = 0;
  std::string outcome;  // "ok", "exit 1", "oom", "interrupted by SIGINT"
  double seconds = 0;
};

struct BuildResult {
  bool ok = false;
  bool interrupted = false;
  std::vector<BuildAttempt> attempts;     // more than one: OOM retries
  unsigned oom_retries = 0;
  std::vector<std::string> wheels;
  double seconds = 0;
  double archbuild_cpu_seconds = 0;        // archbuild itself while driving the build
  double build_cpu_seconds = 0;            // every process of the build
  std::vector<std::string> error_excerpt;  // the first real error, with context
  std::string failing_command;
  std::string failed_target;
  std::vector<NinjaStep> slowest;          // ten slowest steps
  bool trace_written = false;

  nlohmann::json to_json(const BuildPlan& plan) const;
};

// Runs the plan: the whole output to the log, a status line, OOM detection
// with automatic retries at half the jobs (continuing the incremental build)
// down to one job, the trace and slowest steps from .ninja_log, and the first
// real error when it fails. A SIGINT/SIGTERM stops the build's whole process
// group; the build dir stays resumable.
BuildResult execute_build(const BuildPlan& plan, StatusLine& status);

}  // namespace archbuild
