#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "builder/build_requirements.h"
#include "recipe/recipe.h"

namespace archbuild {

struct FoundLibrary {
  std::filesystem::path include_dir;
  std::filesystem::path library_dir;
  // Taken from a wheel installed for the build: "nvidia-nccl-cu13==2.28.9";
  // library_dir then holds the unversioned link CMake's find_library needs.
  std::string wheel_requirement;
};

// Where each library is, looked for in the toolkit (include/, lib64/, lib/,
// targets/<arch>-linux/) and then the system's include and library dirs;
// absent when its header and its library are not both in one such place.
std::map<std::string, FoundLibrary> find_system_libraries(const std::vector<SystemLibrary>& libraries,
                                                          const std::optional<std::filesystem::path>& toolkit_root);

// The wheels to install for the build: one per library this machine lacks
// that names a `wheel` ({cuda_major} replaced).
std::vector<std::string> library_wheel_requirements(const std::vector<SystemLibrary>& libraries,
                                                    const std::map<std::string, FoundLibrary>& found, int cuda_major);

// For each library still missing that names a wheel: its `wheel_dir` in the
// dirs `python` imports from (sys.path), with the header in include/ and
// the library, versioned as the nvidia-* wheels ship it (libnccl.so.2), in
// lib/. `links_dir`/NAME/ gets the unversioned link (libnccl.so) pointing at
// it. The wheel's version comes from `status` (the build requirements as
// installed). Throws UserError(environment) when the interpreter cannot say.
void find_wheel_libraries(const std::vector<SystemLibrary>& libraries, std::map<std::string, FoundLibrary>& found,
                          const std::string& python, const std::vector<RequirementStatus>& status,
                          const std::filesystem::path& links_dir, int cuda_major);

}  // namespace archbuild
