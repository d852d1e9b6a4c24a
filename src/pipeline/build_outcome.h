#pragma once

#include "builder/build_executor.h"
#include "builder/build_plan.h"
#include "builder/project_switches.h"
#include "cache/build_report.h"
#include "core/exit_code.h"

namespace archbuild {

// What one build came to. `exit` is success (built, validated, published, or
// a cache hit), work_failed (the build or its validation failed) or
// interrupted; bad input and environment problems are thrown as UserError.
struct BuildOutcome {
  ExitCode exit = ExitCode::success;
  BuildReport report;
  BuildPlan plan;
  BuildResult result;  // attempts, first error, slowest steps (empty on a cache hit)
  // A wheel came out without CUDA code, and its setup.py builds that only
  // with these set (outermost first) and those others unset: what a second
  // build may set.
  CudaSwitches cuda_switches_found;
};

}  // namespace archbuild
