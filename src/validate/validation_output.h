#pragma once

#include <functional>
#include <string>

#include "validate/wheel_validation.h"

namespace archbuild {

// One line per finding of a wheel's validation, for `validate` and `build`:
// RECORD errors, arch gaps by file, each device check, and the scope (a run
// without a GPU says so).
void print_validation(const WheelValidation& validation, const std::function<void(const std::string&)>& line,
                      std::FILE* stream);

}  // namespace archbuild
