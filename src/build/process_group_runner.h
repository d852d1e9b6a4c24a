#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace archbuild {

struct GroupRunSpec {
  std::vector<std::string> argv;                 // no shell
  std::map<std::string, std::string> env;        // set on top of archbuild's environment
  std::filesystem::path working_dir;
  std::chrono::milliseconds grace{5000};         // TERM, then KILL after this
  std::chrono::milliseconds tick{250};
};

struct GroupRunOutcome {
  int exit_code = -1;       // when !signaled
  bool signaled = false;
  int signal = 0;
  bool interrupted = false;  // archbuild got SIGINT/SIGTERM and stopped the build
  int interrupt_signal = 0;
  std::string describe() const;  // "exit 1", "killed by signal 9", "interrupted by SIGINT"
};

// Runs the build as a child in its own process group (so a terminal's
// Ctrl-C reaches archbuild alone), reads stdout and stderr line by line with
// asio (neither pipe can fill and block the child), and on SIGINT/SIGTERM
// terminates the whole group: TERM, then KILL after the grace period. When
// the child exits, whatever is left of its group is killed too, so no
// compiler outlives the build. `on_tick` runs every `tick` for redraws.
GroupRunOutcome run_in_process_group(const GroupRunSpec& spec,
                                     const std::function<void(std::string_view line, bool from_stderr)>& on_line,
                                     const std::function<void()>& on_tick);

}  // namespace archbuild
