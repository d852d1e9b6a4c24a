#include "cli/command.h"

namespace archbuild {

const std::vector<Command>& command_table() {
  static const std::vector<Command> table = {
      detect_command(),   arch_command(),   check_command(),  inspect_command(), doctor_command(),
      recipes_command(),  source_command(), plan_command(),   build_command(),   matrix_command(),
      validate_command(), cache_command(),  config_command(), help_command(),
  };
  return table;
}

}  // namespace archbuild
