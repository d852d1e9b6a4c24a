#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace archbuild {

// An INI file as Python's configparser and the AWS CLI read them: the files
// users already keep credentials in (~/.aws/config, ~/.aws/credentials,
// ~/.pypirc). `[section]` headers; `key = value` or `key: value`; lines
// starting with # or ; are comments; an indented line continues the value
// before it (the AWS files' nested `s3 =` blocks). Boost's INI parser takes
// neither `:` nor continuation lines, hence this reader.
class IniFile {
 public:
  // nullopt when the file does not exist; a file that cannot be read or a
  // line that is none of the above is UserError(bad_input) naming FILE:LINE.
  static std::optional<IniFile> load(const std::filesystem::path& file);
  static IniFile parse(const std::string& text, const std::string& origin);

  // The value, trimmed; nullopt when the section or key is absent.
  std::optional<std::string> get(const std::string& section, const std::string& key) const;
  bool has_section(const std::string& section) const { return sections_.count(section) > 0; }
  // "FILE:LINE" where the key was set, for messages.
  std::string where(const std::string& section, const std::string& key) const;

 private:
  struct Value {
    std::string text;
    int line = 0;
  };
  std::string origin_;
  std::map<std::string, std::map<std::string, Value>> sections_;
};

}  // namespace archbuild
