#pragma once

#include "process/process_group_runner.h"

namespace archbuild {

// The seam between a build's logic and the processes it starts: the build
// executor runs its attempts through one, tests through a fake.
class CommandRunner {
 public:
  virtual ~CommandRunner();
  virtual GroupRunOutcome run(const GroupRunSpec& spec, const LineHandler& on_line, const TickHandler& on_tick) = 0;
};

// The real one: run_in_process_group.
class ProcessGroupRunner final : public CommandRunner {
 public:
  GroupRunOutcome run(const GroupRunSpec& spec, const LineHandler& on_line, const TickHandler& on_tick) override;
};

}  // namespace archbuild
