#include "gpu/visible_devices.h"

#include "core/strings.h"

namespace archbuild {

std::string visible_devices_for(const std::vector<int>& ordinals, const std::string& user) {
  const auto entries = split_any(user, ",");
  std::vector<std::string> out;
  for (int ordinal : ordinals) {
    if (!entries.empty() && ordinal >= 0 && static_cast<size_t>(ordinal) < entries.size())
      out.push_back(trim(entries[static_cast<size_t>(ordinal)]));
    else
      out.push_back(std::to_string(ordinal));
  }
  return join(out, ",");
}

}  // namespace archbuild
