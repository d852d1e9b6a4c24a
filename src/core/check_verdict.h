#pragma once

#include <string>

namespace archbuild {

// What a check found, as the checks (preflight, verify, the matrix) report
// it; ui/terminal.h paints it.
enum class CheckVerdict { ok, warn, fail, skip };

// "ok", "warn", "FAIL", "skip": the word a plain line and --json show.
std::string verdict_word(CheckVerdict verdict);

}  // namespace archbuild
