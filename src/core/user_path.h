#pragma once

#include <filesystem>
#include <string>

namespace archbuild {

// A path the user gave (a flag, an ARCHBUILD_* variable, the config file),
// made absolute and checked before anything is created under it: one that
// holds a NUL, has a component longer than NAME_MAX (255 bytes) or is
// longer than PATH_MAX is refused with exit 2, naming `what` ("--out",
// "cache_dir (from config file F:3)") and the value, escaped as JSON text.
std::filesystem::path checked_user_path(const std::string& text, const std::string& what);

}  // namespace archbuild
