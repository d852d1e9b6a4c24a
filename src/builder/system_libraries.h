#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "recipe/recipe.h"

namespace archbuild {

struct FoundLibrary {
  std::filesystem::path include_dir;
  std::filesystem::path library_dir;
};

// Where each library is, looked for in the toolkit (include/, lib64/, lib/,
// targets/<arch>-linux/) and then the system's include and library dirs;
// absent when its header and its library are not both in one such place.
std::map<std::string, FoundLibrary> find_system_libraries(const std::vector<SystemLibrary>& libraries,
                                                          const std::optional<std::filesystem::path>& toolkit_root);

}  // namespace archbuild
