#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace archbuild {

struct NinjaStep {
  std::string target;
  long start_ms = 0;
  long end_ms = 0;
  long duration_ms() const { return end_ms - start_ms; }
};

// Reads a .ninja_log (v5/v6) from byte `offset` (the file's size before the
// build: ninja appends one line per finished step). From offset 0, a step
// ending before the previous one marks the start of a later build.
std::vector<NinjaStep> read_ninja_log(const std::filesystem::path& path, uint64_t offset = 0);

// Chrome trace JSON (opens in Perfetto or chrome://tracing): one complete
// event per step, steps packed into lanes so overlaps show as threads.
nlohmann::json chrome_trace(const std::vector<NinjaStep>& steps);

std::vector<NinjaStep> slowest_steps(std::vector<NinjaStep> steps, size_t count);

// .ninja_log files under `root` written since `since` (a build may run ninja
// in several dirs: CMake's build/, cpp_extension's build/temp.*).
std::vector<std::filesystem::path> find_ninja_logs(const std::filesystem::path& root,
                                                   std::filesystem::file_time_type since);
// Every .ninja_log under `root` with its size now (taken before a build).
std::map<std::filesystem::path, uint64_t> ninja_log_sizes(const std::filesystem::path& root);

}  // namespace archbuild
