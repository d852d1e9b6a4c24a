#include "wheel/project_name.h"

#include <cctype>

namespace archbuild {

std::string normalize_project_name(const std::string& name) {
  std::string out;
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      if (out.empty() || out.back() != '-') out += '-';
    } else {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return out;
}

}  // namespace archbuild
