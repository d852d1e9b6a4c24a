#pragma once

#include <string>

namespace archbuild {

// How a child process ended, decoded once from waitpid's status.
struct ExitStatus {
  int code = -1;  // valid when !signaled
  bool signaled = false;
  int signal = 0;  // valid when signaled

  static ExitStatus from_wait_status(int wait_status);
  static ExitStatus exited(int code) { return {code, false, 0}; }
  static ExitStatus killed(int signal) { return {-1, true, signal}; }

  bool succeeded() const { return !signaled && code == 0; }
  // What a shell's $? would say: the exit code, or 128 + the signal.
  int shell_code() const { return signaled ? 128 + signal : code; }
  // "exit 2", "killed by signal 9 (Killed)"
  std::string describe() const;
};

}  // namespace archbuild
