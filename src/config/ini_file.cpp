#include "config/ini_file.h"

#include <sstream>

#include "core/error.h"
#include "core/regular_file.h"
#include "core/strings.h"

namespace archbuild {

std::optional<IniFile> IniFile::load(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return std::nullopt;
  std::string text;
  auto problem = read_regular_file(file, 1u << 20, text);
  if (!problem.empty()) fail_bad_input("cannot read " + file.string() + ": " + problem);
  return parse(text, file.string());
}

IniFile IniFile::parse(const std::string& text, const std::string& origin) {
  IniFile ini;
  ini.origin_ = origin;
  std::istringstream in(text);
  std::string line, section;
  Value* last = nullptr;
  int number = 0;
  std::map<std::string, int> section_lines;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto stripped = trim(line);
    if (stripped.empty() || stripped[0] == '#' || stripped[0] == ';') continue;
    if (line[0] == ' ' || line[0] == '\t') {
      if (!last) fail_bad_input(origin + ":" + std::to_string(number) + ": an indented line continues no value");
      last->text += (last->text.empty() ? "" : "\n") + stripped;
      continue;
    }
    if (stripped[0] == '[') {
      if (stripped.back() != ']')
        fail_bad_input(origin + ":" + std::to_string(number) + ": a section header must end with ']'");
      section = trim(stripped.substr(1, stripped.size() - 2));
      // As Python's configparser (twine, the AWS CLI) reads them: a section
      // or key given twice is an error, not two halves merged silently.
      if (auto [first, added] = section_lines.emplace(section, number); !added)
        fail_bad_input(origin + ":" + std::to_string(number) + ": section [" + printable(section) +
                       "] appears a second time (first at line " + std::to_string(first->second) + ")");
      ini.sections_[section];
      last = nullptr;
      continue;
    }
    const auto separator = stripped.find_first_of("=:");
    if (separator == std::string::npos || section.empty())
      fail_bad_input(origin + ":" + std::to_string(number) + ": expected `key = value` inside a [section]");
    const auto key = to_lower(trim(stripped.substr(0, separator)));
    auto& keys = ini.sections_[section];
    if (auto first = keys.find(key); first != keys.end())
      fail_bad_input(origin + ":" + std::to_string(number) + ": key '" + printable(key) + "' of [" +
                     printable(section) + "] appears a second time (first at line " +
                     std::to_string(first->second.line) + ")");
    auto& value = keys[key];
    value = {trim(stripped.substr(separator + 1)), number};
    last = &value;
  }
  return ini;
}

std::optional<std::string> IniFile::get(const std::string& section, const std::string& key) const {
  auto found = sections_.find(section);
  if (found == sections_.end()) return std::nullopt;
  auto value = found->second.find(key);
  if (value == found->second.end()) return std::nullopt;
  return value->second.text;
}

std::string IniFile::where(const std::string& section, const std::string& key) const {
  auto found = sections_.find(section);
  if (found != sections_.end())
    if (auto value = found->second.find(key); value != found->second.end())
      return origin_ + ":" + std::to_string(value->second.line);
  return origin_;
}

}  // namespace archbuild
