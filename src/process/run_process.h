#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "process/exit_status.h"

namespace archbuild {

struct ProcessResult {
  ExitStatus status;
  bool timed_out = false;
  std::string out;
  std::string err;
  bool succeeded() const { return !timed_out && status.succeeded(); }
  // "exit 2", "killed by signal 9 (Killed)", "timed out"
  std::string describe_status() const;
};

struct ProcessOptions {
  std::optional<std::filesystem::path> working_dir;
  // Variables set (or, with an empty optional, removed) on top of our environment.
  std::map<std::string, std::optional<std::string>> env_overrides;
  std::optional<std::chrono::milliseconds> timeout;
  // Its stdout is a secret (keyring's answer): never logged, not even at trace.
  bool output_is_secret = false;
};

// Runs argv[0] (looked up on PATH unless it has a '/') with the arguments;
// no shell is involved. Both output streams are captured without the
// deadlock of reading one while the other fills (asio pipes). Throws
// UserError(environment) when the program cannot be started.
ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options = {});

// Held while a child is started. Boost.Process makes its pipes without
// close-on-exec, so a child forked by another thread between a pipe's
// creation and its parent-side close would inherit the write end and keep
// the first child's output open (its reader would wait for the wrong
// process). Both runners make their pipes and fork under this lock.
std::mutex& child_launch_mutex();

// The log lines of a child (core/log.h), for both runners. At verbose: its
// argv and directory once started, the names of the variables it gets
// changed, and how it ended and after how long; at debug, each changed
// variable's value and what it was (redacted by name). `env` holds values
// set (or, with an empty optional, removed) on top of our environment;
// `note` ends the first line ("network namespace").
void log_child_started(int pid, const std::vector<std::string>& argv, const std::filesystem::path* working_dir,
                       const std::map<std::string, std::optional<std::string>>& env, const std::string& note = "");
void log_child_finished(int pid, const std::string& argv0, const std::string& how,
                        std::chrono::steady_clock::duration took);

// The full path of a program on PATH, if any.
std::optional<std::filesystem::path> find_on_path(const std::string& program);

}  // namespace archbuild
