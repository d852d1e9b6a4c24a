#include "process/command_runner.h"

namespace archbuild {

CommandRunner::~CommandRunner() = default;

GroupRunOutcome ProcessGroupRunner::run(const GroupRunSpec& spec, const LineHandler& on_line,
                                        const TickHandler& on_tick) {
  return run_in_process_group(spec, on_line, on_tick);
}

}  // namespace archbuild
