#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "builder/progress.h"

namespace archbuild {

// The step launcher's start events (steps.log, one line per compile it
// starts): which compiles are running, for the status line. A compile is
// running from its line until its process ends.
class StepLog {
 public:
  // Removes a steps.log an earlier attempt left.
  explicit StepLog(std::filesystem::path path);
  const std::filesystem::path& path() const { return path_; }
  // Reads the lines appended since the last call into state.running and
  // drops the compiles whose process has ended.
  void poll(ProgressState& state);

 private:
  struct Compile {
    int pid = 0;               // as the compile knew itself
    std::uint64_t pid_ns = 0;  // its PID namespace (0: not said, this one)
    std::optional<int> here;   // its pid in this process's namespace, once found
  };
  void find_pids_here();

  std::filesystem::path path_;
  std::map<std::string, Compile> compiles_;  // running compiles by output
  std::optional<std::uint64_t> own_pid_ns_;
  std::optional<std::uint64_t> step_pid_ns_;  // the step supervisor's, once a compile names it
  uint64_t offset_ = 0;
};

}  // namespace archbuild
