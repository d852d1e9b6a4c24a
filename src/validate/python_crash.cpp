#include "validate/python_crash.h"

#include <algorithm>
#include <vector>

#include "core/strings.h"

namespace archbuild {

std::string python_crash_line(const std::string& output, const std::string& own_prefix) {
  const auto lines = split_any(output, "\n");
  const auto fatal = std::find_if(lines.begin(), lines.end(),
                                  [](const auto& line) { return line.starts_with("Fatal Python error:"); });
  if (fatal == lines.end()) return "";
  // The frames follow, innermost first.
  const auto is_frame = [](const auto& line) { return trim(line).starts_with("File \""); };
  auto frame = lines.end();
  if (!own_prefix.empty()) {
    const std::string own = "File \"" + own_prefix + "/";
    frame = std::find_if(fatal, lines.end(),
                         [&](const auto& line) { return is_frame(line) && trim(line).starts_with(own); });
  }
  if (frame == lines.end()) frame = std::find_if(fatal, lines.end(), is_frame);
  return trim(*fatal) + (frame != lines.end() ? " in " + trim(*frame) : "");
}

}  // namespace archbuild
