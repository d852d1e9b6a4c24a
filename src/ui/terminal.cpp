#include "ui/terminal.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace archbuild {

bool color_enabled(std::FILE* stream) {
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color && *no_color) return false;
  const char* term = std::getenv("TERM");
  if (term && std::strcmp(term, "dumb") == 0) return false;
  return isatty(fileno(stream)) != 0;
}

std::string paint(const std::string& text, Style style, std::FILE* stream) {
  if (style == Style::plain || !color_enabled(stream)) return text;
  const char* code = "";
  switch (style) {
    case Style::bold: code = "1"; break;
    case Style::dim: code = "2"; break;
    case Style::green: code = "32"; break;
    case Style::yellow: code = "33"; break;
    case Style::red: code = "1;31"; break;
    case Style::cyan: code = "36"; break;
    case Style::plain: break;
  }
  return std::string("\x1b[") + code + "m" + text + "\x1b[0m";
}

std::string verdict_label(CheckVerdict verdict, std::FILE* stream) {
  std::string word = verdict_word(verdict);
  word.resize(4, ' ');
  Style style = verdict == CheckVerdict::ok     ? Style::green
                : verdict == CheckVerdict::warn ? Style::yellow
                : verdict == CheckVerdict::fail ? Style::red
                                                : Style::dim;
  return paint(word, style, stream);
}

}  // namespace archbuild
