#include "cli/command_reference.h"

#include <sstream>

namespace archbuild {

std::optional<std::string> reference_section(std::string_view markdown, std::string_view command,
                                             std::string_view subcommand) {
  const std::string heading = subcommand.empty()
                                  ? "## archbuild " + std::string(command)
                                  : "### archbuild " + std::string(command) + " " + std::string(subcommand);
  std::istringstream lines{std::string(markdown)};
  std::string line;
  bool inside = false, in_code = false;
  std::string body;
  while (std::getline(lines, line)) {
    if (!inside) {
      inside = line == heading;
      continue;
    }
    if (line.starts_with("```")) {
      in_code = !in_code;
      continue;
    }
    if (!in_code && line.starts_with("#")) break;  // the next section, of any level
    body += (in_code ? "  " : "") + line + "\n";
  }
  if (!inside) return std::nullopt;
  // Blank lines at either end are the page's layout, not the section's.
  const auto first = body.find_first_not_of('\n');
  if (first == std::string::npos) return std::string{};
  const auto last = body.find_last_not_of('\n');
  return body.substr(first, last - first + 1) + "\n";
}

}  // namespace archbuild
