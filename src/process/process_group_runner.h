#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "process/exit_status.h"
#include "process/network_isolation.h"

namespace archbuild {

struct GroupRunSpec {
  std::vector<std::string> argv;           // no shell
  std::map<std::string, std::string> env;  // set on top of archbuild's environment
  std::filesystem::path working_dir;
  std::chrono::milliseconds grace{5000};  // TERM, then KILL after this
  std::chrono::milliseconds tick{250};
  // When set, a run still going after this is stopped as an interrupt is
  // (TERM, then KILL after the grace period) and reported as timed out.
  std::optional<std::chrono::milliseconds> timeout;
  // When set, the child enters a network namespace of its own before exec
  // (process/network_isolation.h); failing that it exits 126, saying why.
  std::optional<NetworkIsolationSetup> network;
  // Run under `archbuild _contain` (process/step_supervisor.h): whatever the
  // command leaves running, daemons that left the process group included,
  // is stopped when it exits.
  bool contain = false;
};

struct GroupRunOutcome {
  ExitStatus status;
  bool interrupted = false;  // archbuild got SIGINT/SIGTERM and stopped the build
  int interrupt_signal = 0;
  bool timed_out = false;  // ran past spec.timeout and was stopped
  bool succeeded() const { return !interrupted && !timed_out && status.succeeded(); }
  // "exit 1", "killed by signal 9 (Killed)", "interrupted by SIGINT", "timed out"
  std::string describe() const;
};

using LineHandler = std::function<void(std::string_view line, bool from_stderr)>;
using TickHandler = std::function<void()>;

// Runs the build as a child in its own process group (so a terminal's
// Ctrl-C reaches archbuild alone) and reads stdout and stderr line by line
// with asio (neither pipe can fill and block the child). It holds an
// InterruptibleScope: a SIGINT/SIGTERM recorded by archbuild's handler is
// seen on the next tick and terminates the whole group: TERM, then KILL
// after the grace period. When the child exits, whatever is left of its
// group is killed too, so no compiler outlives the build. `on_tick` runs
// every `tick` for redraws. Several runs may go on at once in threads.
GroupRunOutcome run_in_process_group(const GroupRunSpec& spec, const LineHandler& on_line, const TickHandler& on_tick);

}  // namespace archbuild
