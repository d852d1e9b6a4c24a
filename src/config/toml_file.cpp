#include "config/toml_file.h"

#include <cstdio>
#include <string>

#include "core/error.h"
#include "core/regular_file.h"

namespace archbuild {

namespace {

// The code point of the UTF-8 sequence at `at` (0 for a malformed one, which
// toml++ refuses itself), and its length.
char32_t decode_utf8(std::string_view text, size_t at, size_t& length) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  unsigned char lead = byte(at);
  length = lead < 0x80 ? 1 : lead >> 5 == 0x6 ? 2 : lead >> 4 == 0xE ? 3 : lead >> 3 == 0x1E ? 4 : 1;
  if (length == 1 || at + length > text.size()) {
    length = 1;
    return lead < 0x80 ? lead : 0;
  }
  char32_t code = lead & (0xFF >> (length + 1));
  for (size_t i = 1; i < length; ++i) {
    if (byte(at + i) >> 6 != 0x2) return 0;
    code = code << 6 | (byte(at + i) & 0x3F);
  }
  return code;
}

// What toml++ 3.3.0's is_non_ascii_horizontal_whitespace cannot answer.
bool breaks_whitespace_table(char32_t c) {
  return (c >= 0xA1 && c <= 0x499) || (c >= 0x2C8E && c <= 0x3087 && c != 0x3000) || (c >= 0xFB26 && c <= 0xFEFE);
}

}  // namespace

std::optional<TomlHazard> toml_hazard(std::string_view text) {
  size_t line = 1;
  for (size_t at = 0; at < text.size();) {
    if (text[at] == '\n') ++line;
    if (static_cast<unsigned char>(text[at]) < 0x80) {
      ++at;
      continue;
    }
    size_t length = 0;
    char32_t code = decode_utf8(text, at, length);
    if (breaks_whitespace_table(code)) return TomlHazard{line, code};
    at += length;
  }
  return std::nullopt;
}

toml::table parse_toml_file(const std::filesystem::path& file) {
  std::string text;
  if (auto why = read_regular_file(file, kMaxTomlFileBytes, text); !why.empty())
    fail_bad_input(file.string() + " " + why);
  if (auto hazard = toml_hazard(text)) {
    char code[16];
    std::snprintf(code, sizeof code, "U+%04X", static_cast<unsigned>(hazard->code_point));
    fail_bad_input(file.string() + ":" + std::to_string(hazard->line) + ": " + code +
                   " cannot be read safely by the TOML library archbuild is built with (toml++ 3.3); write it as "
                   "\\u" +
                   std::string(code + 2) + " inside a \"...\" string, or leave it out (comments too)");
  }
  return toml::parse(text, file.string());
}

void fail_toml_key(const std::filesystem::path& file, const toml::source_region& where, std::string_view key,
                   std::string_view why) {
  fail_bad_input(file.string() + ":" + std::to_string(where.begin.line) + ": key '" + std::string(key) +
                 "': " + std::string(why));
}

}  // namespace archbuild
