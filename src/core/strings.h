#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace archbuild {

std::string trim(std::string_view text);
std::string to_lower(std::string_view text);
bool starts_with_ci(std::string_view text, std::string_view prefix);
// Splits on any of the separator characters, dropping empty pieces.
std::vector<std::string> split_any(std::string_view text, std::string_view separators);
std::string join(const std::vector<std::string>& parts, std::string_view separator);
// The last `count` non-blank lines of a process's output, each trimmed, joined
// with `separator`: what an error message quotes of a failed command.
std::string last_lines(std::string_view text, size_t count, std::string_view separator = " | ");
// Quotes one word for a POSIX shell.
std::string shell_quote(const std::string& word);
// Splits a command line as a POSIX shell splits words (no expansion):
// blanks separate, '...' and "..." quote, backslash escapes. Throws
// std::invalid_argument on an unterminated quote.
std::vector<std::string> shell_split(std::string_view text);
// Text safe inside HTML/XML text and attribute values: & < > " escaped,
// control characters other than tab and newline (invalid in XML) blanked.
std::string markup_escape(std::string_view text);
// Percent-encoding of every byte but RFC 3986's unreserved characters
// (letters, digits, - . _ ~) and those in `keep` ("/" for a path): the form
// PEP 503 links and S3's SigV4 canonical requests both use.
std::string percent_encode(std::string_view text, std::string_view keep = "");
// Text from elsewhere (a server's error message, a package's name) as one
// line a terminal shows as written: control characters (newlines, escape
// sequences, carriage returns, DEL, and the C1 controls in UTF-8) become
// \xNN, so that it can neither retitle or clear the terminal nor forge a
// line of archbuild's own.
std::string printable(std::string_view text);
// What archbuild writes to a terminal or log: newlines, tabs and colour
// (SGR: ESC [ digits ; m) pass; every other control character or escape
// sequence becomes \xNN. The last line of defence under printable().
std::string terminal_safe(std::string_view text);
// Percent-decoding; nullopt for a malformed escape (%zz, a trailing %4) or %00.
std::optional<std::string> percent_decode(std::string_view text);
// "v2.9.1" -> "v2.9.1", "feature/x" -> "feature_x": safe as one path component.
std::string path_safe(const std::string& text);

}  // namespace archbuild
