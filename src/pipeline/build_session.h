#pragma once

#include "builder/build_plan.h"
#include "pipeline/build_context.h"
#include "pipeline/build_outcome.h"
#include "pipeline/build_request.h"
#include "pipeline/pipeline_events.h"
#include "pipeline/session_services.h"

namespace archbuild {

// The plan `archbuild plan` prints: everything resolved, nothing checked out,
// built or written (the work tree, if one exists, is looked at).
struct PlannedBuild {
  BuildContext context;
  BuildPlan plan;
};
PlannedBuild plan_build(const BuildRequest& request);

// The whole pipeline: resolve, check out (under the work tree's lock), the
// dependencies (built first when the cache lacks them), plan, cache key, the
// key's lock, cache hit or build, local version label, validation, publish
// or quarantine, index refresh, report.json in the out dir.
BuildOutcome run_build(const BuildRequest& request, PipelineEvents& events);
// The same with the world's side effects through `services` (a test's fakes).
BuildOutcome run_build(const BuildRequest& request, PipelineEvents& events, SessionServices& services);

}  // namespace archbuild
