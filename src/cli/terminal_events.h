#pragma once

#include "pipeline/pipeline_events.h"
#include "ui/build_progress_line.h"
#include "ui/status_line.h"

namespace archbuild {

// The pipeline's events on stderr: "stage       text" lines under one live
// status line (plain lines when stderr is not a terminal). With `quiet`
// (--json: stdout carries the report) only the status line is kept.
class TerminalEvents : public PipelineEvents {
 public:
  explicit TerminalEvents(bool quiet) : quiet_(quiet), status_(stderr) {}
  void stage(const std::string& stage, const std::string& text, Tone tone) override;
  void validation(const WheelValidation& validation) override;
  StatusLine& status() override { return status_; }
  BuildProgressSink& build_progress() override { return progress_; }

 private:
  bool quiet_;
  StatusLine status_;
  BuildProgressLine progress_{status_};
};

}  // namespace archbuild
