#include "builder/system_libraries.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/regular_file.h"
#include "core/system_info.h"
#include "process/run_process.h"

namespace archbuild {

std::map<std::string, FoundLibrary> find_system_libraries(const std::vector<SystemLibrary>& libraries,
                                                          const std::optional<std::filesystem::path>& toolkit_root) {
  const std::string arch = host_machine();  // x86_64, aarch64
  std::vector<FoundLibrary> places;
  if (toolkit_root) {
    const auto& root = *toolkit_root;
    for (const char* lib : {"lib64", "lib"}) places.push_back({root / "include", root / lib, {}});
    places.push_back(
        {root / "targets" / (arch + "-linux") / "include", root / "targets" / (arch + "-linux") / "lib", {}});
  }
  places.push_back({"/usr/include", "/usr/lib/" + arch + "-linux-gnu", {}});
  places.push_back({"/usr/local/include", "/usr/local/lib", {}});
  places.push_back({"/usr/include", "/usr/lib64", {}});
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

namespace {

std::string wheel_name(const SystemLibrary& library, int cuda_major) {
  std::string name = library.wheel;
  const std::string placeholder = "{cuda_major}";
  for (size_t at; (at = name.find(placeholder)) != std::string::npos;)
    name.replace(at, placeholder.size(), std::to_string(cuda_major));
  return name;
}

// libnccl.so itself, else the versioned file with the shortest name (libnccl.so.2).
std::optional<std::filesystem::path> library_file(const std::filesystem::path& dir, const std::string& library) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(dir / library, ec)) return dir / library;
  std::optional<std::filesystem::path> best;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    auto name = entry.path().filename().string();
    if (!name.starts_with(library + ".") || !entry.is_regular_file(ec)) continue;
    if (!best || name.size() < best->filename().string().size()) best = entry.path();
  }
  return best;
}

}  // namespace

std::vector<std::string> library_wheel_requirements(const std::vector<SystemLibrary>& libraries,
                                                    const std::map<std::string, FoundLibrary>& found, int cuda_major) {
  std::vector<std::string> wheels;
  for (const auto& library : libraries)
    if (!library.wheel.empty() && !found.count(library.name)) wheels.push_back(wheel_name(library, cuda_major));
  return wheels;
}

void find_wheel_libraries(const std::vector<SystemLibrary>& libraries, std::map<std::string, FoundLibrary>& found,
                          const std::string& python, const std::vector<RequirementStatus>& status,
                          const std::filesystem::path& links_dir, int cuda_major) {
  std::vector<const SystemLibrary*> wanted;
  for (const auto& library : libraries)
    if (!library.wheel.empty() && !found.count(library.name)) wanted.push_back(&library);
  if (wanted.empty()) return;
  auto probe = run_process({python, "-c", "import json, sys; print(json.dumps(sys.path))"});
  auto paths = nlohmann::json::parse(probe.out, nullptr, false);
  if (!probe.succeeded() || !paths.is_array())
    fail_environment(python + " could not say where it imports from (" + probe.describe_status() + ")");
  for (const auto* library : wanted) {
    const auto wheel = wheel_name(*library, cuda_major);
    for (const auto& entry : paths) {
      if (!entry.is_string() || entry.get<std::string>().empty()) continue;
      const auto root = std::filesystem::path(entry.get<std::string>()) / library->wheel_dir;
      std::error_code ec;
      if (!std::filesystem::exists(root / "include" / library->header, ec)) continue;
      auto file = library_file(root / "lib", library->library);
      if (!file) continue;
      // CMake's find_library wants the unversioned name, which these wheels do not ship.
      const auto dir = links_dir / library->name;
      std::filesystem::create_directories(dir, ec);
      place_needed_symlink(*file, dir / library->library);
      FoundLibrary where{root / "include", dir, wheel};
      for (const auto& one : status)
        if (one.name == requirement_name(wheel) && one.installed) {
          where.wheel_requirement = one.name + "==" + *one.installed;
          break;
        }
      found[library->name] = where;
      break;
    }
  }
}

}  // namespace archbuild
