#pragma once

#include <algorithm>
#include <string>

#include "builder/build_progress_sink.h"
#include "ui/status_line.h"
#include "validate/wheel_validation.h"

namespace archbuild {

// Whether a stage line is news, a warning or a failure; the printer decides
// what that looks like (colour on a terminal, nothing in a log).
enum class Tone { plain, warning, failure };

// "stage       text": the stage name in a 12-column field, as both printers show it.
inline std::string stage_line(const std::string& stage, const std::string& text) {
  return stage + std::string(12 - std::min<size_t>(11, stage.size()), ' ') + text;
}

// How the pipeline tells its caller what happens, as it happens. The CLI
// prints stage lines under one live status line on stderr; a matrix cell
// writes both to the cell's log.
class PipelineEvents {
 public:
  virtual ~PipelineEvents() = default;
  // One permanent line: "source", "plan", "cache", "validate", ...
  virtual void stage(const std::string& stage, const std::string& text, Tone tone = Tone::plain) = 0;
  // A wheel's validation findings, once it is done.
  virtual void validation(const WheelValidation& validation) = 0;
  // The live line (fetch progress).
  virtual StatusLine& status() = 0;
  // A running build's progress snapshots, which the printer paints.
  virtual BuildProgressSink& build_progress() = 0;
};

}  // namespace archbuild
