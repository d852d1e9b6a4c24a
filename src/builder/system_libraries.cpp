#include "builder/system_libraries.h"

#include <sys/utsname.h>

namespace archbuild {

std::map<std::string, FoundLibrary> find_system_libraries(const std::vector<SystemLibrary>& libraries,
                                                          const std::optional<std::filesystem::path>& toolkit_root) {
  utsname machine{};
  ::uname(&machine);
  const std::string arch = machine.machine;  // x86_64, aarch64
  std::vector<FoundLibrary> places;
  if (toolkit_root) {
    const auto& root = *toolkit_root;
    for (const char* lib : {"lib64", "lib"}) places.push_back({root / "include", root / lib});
    places.push_back({root / "targets" / (arch + "-linux") / "include", root / "targets" / (arch + "-linux") / "lib"});
  }
  places.push_back({"/usr/include", "/usr/lib/" + arch + "-linux-gnu"});
  places.push_back({"/usr/local/include", "/usr/local/lib"});
  places.push_back({"/usr/include", "/usr/lib64"});
  std::map<std::string, FoundLibrary> found;
  for (const auto& library : libraries)
    for (const auto& place : places) {
      std::error_code ec;
      if (std::filesystem::exists(place.include_dir / library.header, ec) &&
          std::filesystem::exists(place.library_dir / library.library, ec)) {
        found[library.name] = place;
        break;
      }
    }
  return found;
}

}  // namespace archbuild
