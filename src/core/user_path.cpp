#include "core/user_path.h"

#include <climits>

#include "core/error.h"
#include "core/json_text.h"

namespace archbuild {

std::filesystem::path checked_user_path(const std::string& text, const std::string& what) {
  const auto shown = json_text(text);  // quoted, control characters escaped ("\u0000")
  if (text.find('\0') != std::string::npos)
    fail_bad_input(what + " = " + shown + " holds a NUL character, which no path can");
  for (const auto& component : std::filesystem::path(text))
    if (component.native().size() > NAME_MAX)
      fail_bad_input(what + " = " + shown + ": its component '" + component.native().substr(0, 40) + "...' is " +
                     std::to_string(component.native().size()) + " bytes, more than the " + std::to_string(NAME_MAX) +
                     " a file name may have (NAME_MAX)");
  auto absolute = std::filesystem::absolute(text);
  if (absolute.native().size() >= PATH_MAX)
    fail_bad_input(what + " = " + shown + " is " + std::to_string(absolute.native().size()) +
                   " bytes as an absolute path, more than the " + std::to_string(PATH_MAX) +
                   " a path may have (PATH_MAX)");
  return absolute;
}

}  // namespace archbuild
