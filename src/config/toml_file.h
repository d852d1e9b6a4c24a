#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

#include <toml++/toml.h>

namespace archbuild {

// archbuild's TOML files (recipes, the config file) are small; this is far above any.
inline constexpr uint64_t kMaxTomlFileBytes = 1u << 20;

// toml::parse_file for files a user or a site writes: only a regular file of
// at most kMaxTomlFileBytes is read (a FIFO or a link to /dev/zero is
// refused, never read forever), and a text that would reach undefined
// behaviour in the toml++ it is built with (toml_hazard) is refused.
// Those refusals are UserError(bad_input) naming the file (and line);
// syntax errors are toml::parse_error, as from toml::parse_file.
toml::table parse_toml_file(const std::filesystem::path& file);

// UserError(bad_input) "FILE:LINE: key 'KEY': WHY" for a bad entry of one of
// archbuild's own tables (toolchains/*.toml and the like).
[[noreturn]] void fail_toml_key(const std::filesystem::path& file, const toml::source_region& where,
                                std::string_view key, std::string_view why);

// toml++ 3.3.0 (Debian 12's) asks whether a non-ASCII character is white
// space through a generated table that reaches __builtin_unreachable() for
// U+00A1..U+0499, U+2C8E..U+3087 (but U+3000) and U+FB26..U+FEFE. It asks
// wherever white space may stand, and while it scans a bare value up to its
// end, which can run over quotes and `#`: no lexer short of toml++'s own
// knows which of these characters it will ask about, so the first one
// anywhere in the text (a comment or a string too) is the hazard. In a
// string, the \uXXXX escape writes the same character safely.
struct TomlHazard {
  size_t line = 0;  // 1-based
  char32_t code_point = 0;
};
std::optional<TomlHazard> toml_hazard(std::string_view text);

}  // namespace archbuild
