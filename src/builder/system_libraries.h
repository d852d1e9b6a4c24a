#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace archbuild {

// [[system_library]] in a recipe: a library the build should take from this
// machine rather than build or download itself (PyTorch's NCCL: without one
// its build clones NCCL from GitHub, which the offline build step cannot).
struct SystemLibrary {
  std::string name;     // "NCCL"
  std::string header;   // "nccl.h"
  std::string library;  // "libnccl.so" (the unversioned name CMake's find_library needs)
  // Set when found; {include_dir} and {library_dir} are where it was.
  std::map<std::string, std::string> found_env;
  std::string missing;  // what the build does without it, and what to do
};

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
