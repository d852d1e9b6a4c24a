#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace archbuild {

// JSON as archbuild writes it (reports, manifests, --json): indented, and
// text that is not valid UTF-8 (file names, RECORD paths, compiler output)
// replaced by U+FFFD instead of failing the whole output.
inline std::string json_text(const nlohmann::json& value, int indent = 2) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace archbuild
