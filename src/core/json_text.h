#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace archbuild {

// JSON as archbuild writes it (reports, manifests, --json): indented, and
// text that is not valid UTF-8 (file names, RECORD paths, compiler output)
// replaced by U+FFFD instead of failing the whole output.
inline std::string json_text(const nlohmann::json& value, int indent = 2) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Fields of JSON archbuild reads back from disk (store entries, reports),
// which anyone may have edited: the value at `key` of an object, or
// `fallback` when the JSON is not an object, the key is absent, or its value
// is of another type. Never throws.
inline std::string json_string(const nlohmann::json& object, const char* key, const std::string& fallback = "") {
  if (!object.is_object()) return fallback;
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : fallback;
}
// The strings of the array at `key` (other items skipped); empty when there is none.
inline std::vector<std::string> json_strings(const nlohmann::json& object, const char* key) {
  std::vector<std::string> found;
  if (!object.is_object()) return found;
  const auto it = object.find(key);
  if (it != object.end() && it->is_array())
    for (const auto& item : *it)
      if (item.is_string()) found.push_back(item.get<std::string>());
  return found;
}
inline double json_number(const nlohmann::json& object, const char* key, double fallback = 0) {
  if (!object.is_object()) return fallback;
  const auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<double>() : fallback;
}

}  // namespace archbuild
