#include "cli/terminal_events.h"

#include <algorithm>

#include "ui/terminal.h"
#include "validate/validation_output.h"

namespace archbuild {

void TerminalEvents::stage(const std::string& stage, const std::string& text, Tone tone) {
  if (quiet_) return;
  const std::string padding(12 - std::min<size_t>(11, stage.size()), ' ');
  const std::string shown = tone == Tone::failure   ? paint(text, Style::red, stderr)
                            : tone == Tone::warning ? paint(text, Style::yellow, stderr)
                                                    : text;
  status_.print(paint(stage, Style::bold, stderr) + padding + shown);
}

void TerminalEvents::validation(const WheelValidation& validation) {
  print_validation(
      validation, [&](const std::string& text) { stage("", text, Tone::plain); }, stderr);
}

}  // namespace archbuild
