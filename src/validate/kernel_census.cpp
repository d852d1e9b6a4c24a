#include "validate/kernel_census.h"

#include <cstdlib>
#include <fstream>

#include "arch/compat.h"
#include "binary/binary_walker.h"
#include "binary/kernel_names.h"
#include "core/regular_file.h"
#include "core/strings.h"

namespace archbuild {

std::string KernelCensus::summary() const {
  if (!recorded) return "kernel launches not counted: " + not_recorded;
  std::string text = "launched " + std::to_string(launched.size()) + " of " + std::to_string(wheel_kernels) +
                     " kernel" + (wheel_kernels == 1 ? "" : "s") + " of this wheel";
  if (!launched.empty()) text += ", on " + std::to_string(devices.size()) + " GPU" + (devices.size() == 1 ? "" : "s");
  return text;
}

nlohmann::json KernelCensus::to_json() const {
  auto names = nlohmann::json::array();
  for (const auto& name : launched) names.push_back({{"name", name}, {"demangled", demangle(name)}});
  return {{"recorded", recorded},
          {"not_recorded", not_recorded},
          {"wheel_kernels", wheel_kernels},
          {"launched_count", launched.size()},
          {"launched", names},
          {"devices", std::vector<int>(devices.begin(), devices.end())},
          {"other_kernels", other_kernels},
          {"unreadable", unreadable},
          {"summary", summary()}};
}

LaunchRecords read_launch_records(const std::filesystem::path& dir) {
  LaunchRecords records;
  std::error_code ec;
  std::vector<std::string> reasons;
  size_t processes = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const auto name = entry.path().filename().string();
    if (name.rfind("launches-", 0) != 0 || !entry.is_regular_file(ec)) continue;
    std::string text;
    if (!read_regular_file(entry.path(), 64 << 20, text).empty()) continue;
    ++processes;
    for (const auto& line : split_any(text, "\n")) {
      if (line.rfind("# unavailable: ", 0) == 0) {
        reasons.push_back(line.substr(15));
      } else if (line.rfind("# archbuild launch recorder", 0) == 0) {
        records.recorded = true;
      } else if (auto tab = line.find('\t'); tab != std::string::npos && tab > 0 && tab + 1 < line.size()) {
        char* end = nullptr;
        long device = std::strtol(line.c_str(), &end, 10);
        if (end != line.c_str() + tab || device < 0 || device > 4096) continue;
        records.launched[line.substr(tab + 1)].insert(static_cast<int>(device));
      }
    }
  }
  if (!records.recorded)
    records.not_recorded = processes == 0 ? "no process of the checks initialised CUDA with the launch recorder"
                                          : (reasons.empty() ? "the recorder wrote no header" : reasons.front());
  return records;
}

KernelCensus take_census(const std::set<std::string>& wheel_kernels, const LaunchRecords& records) {
  KernelCensus census;
  census.recorded = records.recorded;
  census.not_recorded = records.not_recorded;
  census.wheel_kernels = wheel_kernels.size();
  for (const auto& [name, devices] : records.launched) {
    if (!wheel_kernels.count(name)) {
      ++census.other_kernels;
      continue;
    }
    census.launched.push_back(name);
    census.devices.insert(devices.begin(), devices.end());
  }
  return census;
}

std::set<std::string> wheel_kernels_for(const std::filesystem::path& wheel, const std::vector<ComputeCapability>& gpus,
                                        bool with_ptx, bool& unreadable) {
  std::set<std::string> names;
  auto runs_here = [&](const FatbinEntry& entry) {
    for (auto cc : gpus) {
      auto verdict = can_run(entry.image, cc);
      if (verdict == RunVerdict::native || (with_ptx && verdict == RunVerdict::ptx_jit)) return true;
    }
    return false;
  };
  WalkOptions options;
  options.with_bytes = [&](const BinaryInventory& inventory, const ByteView& bytes) {
    if (inventory.error) unreadable = true;
    if (inventory.error || !inventory.has_cuda_code()) return;
    auto kernels = list_kernels(inventory, bytes, runs_here);
    if (kernels.error) unreadable = true;
    auto all = kernels.all_names();
    names.insert(all.begin(), all.end());
  };
  walk_binaries(wheel, options, [](const BinaryInventory&) {});
  return names;
}

std::filesystem::path launch_recorder_library() {
  constexpr const char* kName = "libarchbuild_launch_recorder.so";
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  auto text = exe.string();
  if (constexpr std::string_view kDeleted = " (deleted)"; text.ends_with(kDeleted))
    exe = text.substr(0, text.size() - kDeleted.size());
  for (const auto& candidate : {exe.parent_path() / kName, exe.parent_path() / ".." / "lib" / "archbuild" / kName})
    if (std::filesystem::is_regular_file(candidate, ec)) return candidate.lexically_normal();
  return {};
}

std::filesystem::path find_cupti_library(const std::string& python) {
  std::error_code ec;
  std::vector<std::filesystem::path> lib_dirs;
  if (!python.empty()) {
    // bin/python -> the environment's lib/pythonX.Y/site-packages/nvidia/*/lib
    auto prefix = std::filesystem::path(python).parent_path().parent_path();
    for (const auto& lib : std::filesystem::directory_iterator(prefix / "lib", ec)) {
      if (lib.path().filename().string().rfind("python", 0) != 0) continue;
      auto nvidia = lib.path() / "site-packages" / "nvidia";
      for (const char* sub : {"cu13/lib", "cuda_cupti/lib", "cu12/lib"}) lib_dirs.push_back(nvidia / sub);
    }
  }
  for (const char* toolkit : {static_cast<const char*>(std::getenv("CUDA_HOME")),
                              static_cast<const char*>(std::getenv("CUDA_PATH")), "/usr/local/cuda"})
    if (toolkit && *toolkit) lib_dirs.push_back(std::filesystem::path(toolkit) / "extras" / "CUPTI" / "lib64");
  for (const auto& dir : lib_dirs)
    for (const char* name : {"libcupti.so.13", "libcupti.so.12", "libcupti.so"})
      if (std::filesystem::exists(dir / name, ec)) return dir / name;
  return {};
}

std::map<std::string, std::optional<std::string>> launch_recorder_env(const std::filesystem::path& dir,
                                                                      const std::string& python, std::string& why) {
  auto library = launch_recorder_library();
  if (library.empty()) {
    why = "archbuild's launch recorder (libarchbuild_launch_recorder.so) is not installed beside archbuild";
    return {};
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::map<std::string, std::optional<std::string>> env = {{"CUDA_INJECTION64_PATH", library.string()},
                                                           {"ARCHBUILD_LAUNCH_DIR", dir.string()}};
  if (auto cupti = find_cupti_library(python); !cupti.empty()) env["ARCHBUILD_CUPTI_LIBRARY"] = cupti.string();
  return env;
}

}  // namespace archbuild
