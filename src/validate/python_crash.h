#pragma once

#include <string>

namespace archbuild {

// What Python's fault handler said about a process that died of a signal:
// "Fatal Python error: Segmentation fault in File "x.py", line 131 in f",
// naming the innermost frame under `own_prefix` (a dir; "" for any), else
// the innermost frame. "" when `output` holds no such report.
std::string python_crash_line(const std::string& output, const std::string& own_prefix = "");

}  // namespace archbuild
