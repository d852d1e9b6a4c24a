#include <algorithm>
#include <cstdio>
#include <iostream>

#include "cli/build_options.h"
#include "cli/command.h"
#include "cli/json_output.h"
#include "cli/terminal_events.h"
#include "pipeline/build_session.h"
#include "ui/terminal.h"

namespace archbuild {

namespace {

void print_build_summary(const BuildOutcome& outcome, PipelineEvents& events) {
  const auto& result = outcome.result;
  const auto& report = outcome.report;
  const auto& plan = outcome.plan;
  if (report.cache_hit) {
    for (const auto& wheel : report.wheels) events.stage("wheel", wheel.path.string());
    for (const auto& text : report.install) events.stage("install", text);
    return;
  }
  char summary[128];
  std::snprintf(summary, sizeof summary, "%.1f s, %u attempt%s%s", result.seconds,
                static_cast<unsigned>(result.attempts.size()), result.attempts.size() == 1 ? "" : "s",
                result.oom_retries ? (", " + std::to_string(result.oom_retries) + " OOM retries").c_str() : "");
  if (!result.attempts.empty() && !result.interrupted)
    events.stage("archs", "enforced: " + result.enforcement.summary(),
                 result.enforcement.left ? Tone::warning : Tone::plain);
  if (result.ok) {
    events.stage("build", std::string("ok, ") + summary);
    for (const auto& wheel : report.wheels) events.stage("wheel", wheel.path.string());
    if (report.store) events.stage("cache", "published " + report.store->string());
    for (const auto& text : report.install) events.stage("install", text);
    if (result.trace_written) events.stage("trace", plan.trace_path.string());
    if (!result.slowest.empty()) {
      std::string slow;
      for (size_t i = 0; i < std::min<size_t>(3, result.slowest.size()); ++i)
        slow += (i ? ", " : "") + result.slowest[i].target + " " +
                std::to_string(result.slowest[i].duration_ms() / 1000.0).substr(0, 4) + " s";
      events.stage("slowest", slow);
    }
  } else if (result.interrupted) {
    events.stage("build", "interrupted; the build dir is kept, rerun to resume", Tone::warning);
  } else if (!result.attempts.empty() && result.attempts.back().outcome == AttemptOutcome::ok) {
    events.stage("build", "ok, but the wheel failed validation (see above)");
  } else {
    events.stage("build", std::string("FAILED, ") + summary, Tone::failure);
    if (!result.failed_target.empty()) std::cerr << "failed target: " << result.failed_target << "\n";
    if (!result.failing_command.empty()) std::cerr << "command: " << result.failing_command << "\n";
    for (const auto& text : result.error_excerpt) std::cerr << "  | " << text << "\n";
  }
  events.stage("log", plan.log_path.string());
}

}  // namespace

Command build_command() {
  return {"build", "Check out, build, validate and publish a recipe, directory, git URL or sdist for given archs",
          [](CLI::App& app) {
            auto options = std::make_shared<BuildOptions>();
            options->declare(app);
            return [options]() {
              TerminalEvents events(options->json);
              auto outcome = run_build(options->request(), events);
              if (options->json)
                print_json(outcome.report.to_json());
              else
                print_build_summary(outcome, events);
              return outcome.exit;
            };
          }};
}

}  // namespace archbuild
