#pragma once

#include <string>

namespace archbuild {

// PEP 503: lowercase, runs of '-', '_' and '.' become one '-'. What names a
// project on an index page, in an sdist's or a wheel's file name, and in a
// requirement.
std::string normalize_project_name(const std::string& name);

}  // namespace archbuild
