#include "core/strings.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <stdexcept>

namespace archbuild {

namespace {
int hex_digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

std::string trim(std::string_view text) {
  auto is_space = [](unsigned char c) { return std::isspace(c) != 0; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return std::string(text);
}

std::string to_lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool starts_with_ci(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && to_lower(text.substr(0, prefix.size())) == to_lower(prefix);
}

std::string shell_quote(const std::string& word) {
  if (!word.empty() &&
      word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") ==
          std::string::npos)
    return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::vector<std::string> split_any(std::string_view text, std::string_view separators) {
  std::vector<std::string> parts;
  std::string current;
  for (char c : text) {
    if (separators.find(c) != std::string_view::npos) {
      if (!current.empty()) parts.push_back(std::move(current));
      current.clear();
    } else {
      current.push_back(c);
    }
  }
  if (!current.empty()) parts.push_back(std::move(current));
  return parts;
}

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += separator;
    out += parts[i];
  }
  return out;
}

std::string last_lines(std::string_view text, size_t count, std::string_view separator) {
  std::vector<std::string> lines;
  for (const auto& line : split_any(text, "\n"))
    if (auto trimmed = trim(line); !trimmed.empty()) lines.push_back(std::move(trimmed));
  lines.erase(lines.begin(), lines.end() - static_cast<std::ptrdiff_t>(std::min(count, lines.size())));
  return join(lines, separator);
}

std::string markup_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') ? ' ' : c;
    }
  }
  return out;
}

std::string path_safe(const std::string& text) {
  std::string out = text;
  for (auto& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  return out.empty() ? "_" : out;
}

std::vector<std::string> shell_split(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote == '\'') {
      if (c == '\'')
        quote = 0;
      else
        word += c;
    } else if (quote == '"') {
      if (c == '"')
        quote = 0;
      else if (c == '\\' && i + 1 < text.size() &&
               std::string_view("\"\\$`").find(text[i + 1]) != std::string_view::npos)
        word += text[++i];
      else
        word += c;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      in_word = true;
      if (c == '\'' || c == '"')
        quote = c;
      else if (c == '\\' && i + 1 < text.size())
        word += text[++i];
      else
        word += c;
    }
  }
  if (quote) throw std::invalid_argument(std::string("unterminated ") + (quote == '"' ? "\"" : "'") + " quote");
  if (in_word) words.push_back(std::move(word));
  return words;
}

std::string percent_encode(std::string_view text, std::string_view keep) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' ||
        keep.find(static_cast<char>(c)) != keep.npos) {
      out += static_cast<char>(c);
    } else {
      char buffer[4];
      std::snprintf(buffer, sizeof buffer, "%%%02X", c);
      out += buffer;
    }
  }
  return out;
}

std::optional<std::string> percent_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (text.size() - i < 3) return std::nullopt;
    int high = hex_digit_value(text[i + 1]), low = hex_digit_value(text[i + 2]);
    if (high < 0 || low < 0 || (high == 0 && low == 0)) return std::nullopt;  // no file name holds a NUL
    out += static_cast<char>(high * 16 + low);
    i += 2;
  }
  return out;
}

namespace {
void append_escaped(std::string& out, unsigned char c) {
  char escaped[8];
  std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
  out += escaped;
}

// Whether text[at] is the first byte of a C1 control in UTF-8 (U+0080..U+009F:
// 0xC2 0x80..0x9F), which a terminal may take as CSI or OSC.
bool c1_control_at(std::string_view text, size_t at) {
  return static_cast<unsigned char>(text[at]) == 0xc2 && at + 1 < text.size() &&
         static_cast<unsigned char>(text[at + 1]) >= 0x80 && static_cast<unsigned char>(text[at + 1]) <= 0x9f;
}

// The length of an SGR sequence (ESC [ digits/; m) at text[at], or 0.
size_t sgr_length(std::string_view text, size_t at) {
  if (at + 1 >= text.size() || text[at] != '\x1b' || text[at + 1] != '[') return 0;
  size_t end = at + 2;
  while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == ';')) ++end;
  return end < text.size() && text[end] == 'm' ? end + 1 - at : 0;
}

template <typename Keep>
std::string escape_controls(std::string_view text, Keep keep) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (size_t kept = keep(text, i)) {
      out.append(text.substr(i, kept));
      i += kept - 1;
    } else if (c < 0x20 || c == 0x7f) {
      append_escaped(out, c);
    } else if (c1_control_at(text, i)) {
      append_escaped(out, c);
      append_escaped(out, static_cast<unsigned char>(text[++i]));
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}
}  // namespace

std::string printable(std::string_view text) {
  return escape_controls(text, [](std::string_view, size_t) -> size_t { return 0; });
}

std::string terminal_safe(std::string_view text) {
  return escape_controls(text, [](std::string_view all, size_t at) -> size_t {
    if (all[at] == '\n' || all[at] == '\t') return 1;
    return sgr_length(all, at);
  });
}

}  // namespace archbuild
