#include "ui/build_progress_line.h"

#include "ui/terminal.h"

namespace archbuild {

void BuildProgressLine::progress(const StatusText& snapshot) {
  auto line = format_status_line(snapshot, static_cast<size_t>(terminal_width(stderr) - 1));
  if (auto bracket = line.find("] "); status_.interactive() && bracket != std::string::npos)
    line = paint(line.substr(0, bracket + 1), Style::cyan, stderr) + line.substr(bracket + 1);  // NO_COLOR aware
  status_.update(line);
}

}  // namespace archbuild
