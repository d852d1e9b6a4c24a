#include "cache/cache_key.h"

#include <algorithm>
#include <sstream>

#include "core/sha256.h"

namespace archbuild {

namespace {
// Values are single-line: a backslash, a newline and a carriage return are
// escaped (\\, \n, \r), so that two different values never share a text
// (format 1 escaped only the newline: `a\nb` typed and a real newline collided).
std::string escape_value(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else
      out += c;
  }
  return out;
}

std::string unescape_value(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 == text.size()) {
      out += text[i];
      continue;
    }
    const char next = text[++i];
    out += next == 'n' ? '\n' : next == 'r' ? '\r' : next;
  }
  return out;
}

}  // namespace

std::map<std::string, std::string> parse_key_text(const std::string& text) {
  std::map<std::string, std::string> values;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    auto space = line.find(' ');
    values[line.substr(0, space)] = space == std::string::npos ? "" : unescape_value(line.substr(space + 1));
  }
  return values;
}

CacheKey CacheKey::compute(const std::map<std::string, std::string>& inputs) {
  CacheKey key;
  key.text = "cache_format " + std::to_string(kCacheFormatVersion) + "\n";
  for (const auto& [name, value] : inputs) {  // std::map: sorted by key
    if (name == "cache_format") continue;
    key.text += name + " " + escape_value(value) + "\n";
  }
  key.hash = sha256_hex(key.text);
  return key;
}

std::vector<KeyDifference> diff_key_texts(const std::string& before, const std::string& after) {
  auto a = parse_key_text(before), b = parse_key_text(after);
  std::vector<KeyDifference> differences;
  for (const auto& [key, value] : a) {
    auto it = b.find(key);
    if (it == b.end())
      differences.push_back({key, value, ""});
    else if (it->second != value)
      differences.push_back({key, value, it->second});
  }
  for (const auto& [key, value] : b)
    if (!a.count(key)) differences.push_back({key, "", value});
  std::sort(differences.begin(), differences.end(), [](const auto& x, const auto& y) { return x.key < y.key; });
  return differences;
}

}  // namespace archbuild
