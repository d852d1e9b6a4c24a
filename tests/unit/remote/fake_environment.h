#pragma once

#include <map>
#include <string>

#include "remote/s3_settings.h"

namespace archbuild {

// The process environment a test makes up: these variables and no others.
inline EnvironmentLookup fake_environment(std::map<std::string, std::string> values) {
  return [values](const std::string& name) -> std::optional<std::string> {
    auto found = values.find(name);
    if (found == values.end()) return std::nullopt;
    return found->second;
  };
}

}  // namespace archbuild
