#include "cli/terminal_events.h"

#include <algorithm>

#include "ui/terminal.h"
#include "validate/validation_output.h"

namespace archbuild {

void TerminalEvents::stage(const std::string& stage, const std::string& text, Tone tone) {
  if (quiet_) return;
  const std::string shown = tone == Tone::failure   ? paint(text, Style::red, stderr)
                            : tone == Tone::warning ? paint(text, Style::yellow, stderr)
                                                    : text;
  // the stage name bold, the padding and text as stage_line lays them out
  status_.print(paint(stage, Style::bold, stderr) + stage_line(stage, shown).substr(stage.size()));
}

void TerminalEvents::validation(const WheelValidation& validation) {
  print_validation(
      validation, [&](const std::string& text) { stage("", text, Tone::plain); }, stderr);
}

}  // namespace archbuild
