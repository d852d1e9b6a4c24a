#include "process/exit_status.h"

#include <sys/wait.h>

#include <cstring>

namespace archbuild {

ExitStatus ExitStatus::from_wait_status(int wait_status) {
  if (WIFSIGNALED(wait_status)) return killed(WTERMSIG(wait_status));
  if (WIFEXITED(wait_status)) return exited(WEXITSTATUS(wait_status));
  return {};  // stopped or continued: not an end (waitpid without WUNTRACED never says so)
}

std::string ExitStatus::describe() const {
  if (signaled) return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  return "exit " + std::to_string(code);
}

}  // namespace archbuild
