#pragma once

#include <cstdio>
#include <string>

#include "core/check_verdict.h"

namespace archbuild {

enum class Style { plain, bold, dim, green, yellow, red, cyan };

// Colour only on a terminal, and never when NO_COLOR is set (no-color.org).
bool color_enabled(std::FILE* stream);
std::string paint(const std::string& text, Style style, std::FILE* stream = stdout);

// A check's verdict word, padded and coloured: "ok  ", "warn", "FAIL", "skip".
std::string verdict_label(CheckVerdict verdict, std::FILE* stream = stdout);

}  // namespace archbuild
