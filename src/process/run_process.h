#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace archbuild {

struct ProcessResult {
  int exit_code = -1;        // valid when !signaled
  bool signaled = false;
  int signal = 0;            // valid when signaled
  bool timed_out = false;
  std::string out;
  std::string err;
  bool succeeded() const { return !signaled && !timed_out && exit_code == 0; }
  // "exit 2", "killed by signal 9 (Killed)", "timed out"
  std::string describe_status() const;
};

struct ProcessOptions {
  std::optional<std::filesystem::path> working_dir;
  // Variables set (or, with an empty optional, removed) on top of our environment.
  std::map<std::string, std::optional<std::string>> env_overrides;
  std::optional<std::chrono::milliseconds> timeout;
};

// Runs argv[0] (looked up on PATH unless it has a '/') with the arguments;
// no shell is involved. Both output streams are captured without the
// deadlock of reading one while the other fills (asio pipes). Throws
// UserError(environment) when the program cannot be started.
ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options = {});

// The full path of a program on PATH, if any.
std::optional<std::filesystem::path> find_on_path(const std::string& program);

}  // namespace archbuild
