#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/exit_code.h"

namespace archbuild {

// A command is metadata plus one function (vcpkg-tool's habit): `setup`
// declares the command's options on its CLI11 subcommand and returns the
// function that runs it once the command line is parsed.
struct Command {
  std::string name;
  std::string synopsis;
  std::function<std::function<ExitCode()>(CLI::App&)> setup;
};

// Every command, in the order `archbuild --help` lists them (command_table.cpp).
const std::vector<Command>& command_table();

// One factory per command, each in its own file.
Command arch_command();
Command detect_command();
Command check_command();
Command inspect_command();
Command doctor_command();
Command recipes_command();
Command source_command();
Command plan_command();
Command build_command();
Command config_command();
Command validate_command();
Command cache_command();
Command matrix_command();
Command help_command();

}  // namespace archbuild
