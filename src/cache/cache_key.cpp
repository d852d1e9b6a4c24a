#include "cache/cache_key.h"

#include <algorithm>
#include <sstream>

#include "core/sha256.h"

namespace archbuild {

namespace {
// Values are single-line: newlines would break the text format.
std::string one_line(const std::string& value) {
  std::string out;
  for (char c : value) out += c == '\n' ? std::string("\\n") : std::string(1, c);
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
    values[line.substr(0, space)] = space == std::string::npos ? "" : line.substr(space + 1);
  }
  return values;
}

CacheKey CacheKey::compute(const std::map<std::string, std::string>& inputs) {
  CacheKey key;
  key.text = "cache_format " + std::to_string(kCacheFormatVersion) + "\n";
  for (const auto& [name, value] : inputs) {  // std::map: sorted by key
    if (name == "cache_format") continue;
    key.text += name + " " + one_line(value) + "\n";
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
