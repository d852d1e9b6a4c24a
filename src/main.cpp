#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "builder/step_launcher.h"
#include "cli/command.h"
#include "cli/command_reference.h"
#include "config/settings.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "core/log.h"
#include "gpu/module_loader.h"
#include "process/step_supervisor.h"
#include "recipe/recipe.h"
#include "ui/scrubbed_streams.h"

namespace {
// Where the command word is: after any global log options given first
// (`archbuild -v torch ...`, `archbuild --log-level debug torch ...`).
int command_word_index(int argc, char** argv) {
  int i = 1;
  while (i < argc) {
    std::string_view word = argv[i];
    if (word == "--verbose" || (word.size() > 1 && word[0] == '-' && word.find_first_not_of('v', 1) == word.npos) ||
        word.rfind("--log-level=", 0) == 0)
      ++i;
    else if (word == "--log-level")
      i += 2;
    else
      break;
  }
  return i;
}

// ARCHBUILD_LOG, then -v or --log-level (a flag wins over the environment;
// --log-level over -v). Throws UserError(bad_input) naming the bad value.
void apply_log_level(int verbosity, const std::string& level_option) {
  auto parse = [](const std::string& value, const std::string& where) {
    try {
      return archbuild::log::level_from_name(value);
    } catch (const archbuild::UserError& e) {
      archbuild::fail_bad_input(where + ": " + e.what());
    }
  };
  namespace log = archbuild::log;
  if (!level_option.empty())
    log::set_terminal_level(parse(level_option, "--log-level"));
  else if (verbosity > 0)
    log::set_terminal_level(log::level_from_verbosity(verbosity));
  else if (const char* env = std::getenv("ARCHBUILD_LOG"); env && *env)
    log::set_terminal_level(parse(env, "ARCHBUILD_LOG"));
}

bool names_a_recipe(const char* word) {
  try {
    // Site recipes count too (recipe_path from the config file or environment).
    return archbuild::RecipeBook::load_for(archbuild::Settings::load()).find(word) != nullptr;
  } catch (const std::exception&) {
    return false;  // a broken recipe dir: the normal parse reports the unknown command
  }
}
}  // namespace

int main(int argc, char** argv) {
  using namespace archbuild;
  // The compiler launcher runs once per compile: straight to exec, no CLI parsing.
  if (argc > 1 && std::string_view(argv[1]) == kStepLauncherCommand) return run_step_launcher(argc, argv);
  // The supervisor each build step runs under (process/step_supervisor.h).
  if (argc > 1 && std::string_view(argv[1]) == kStepSupervisorCommand) return run_step_supervisor(argc, argv);
  // The driver-API fatbin loader of device validation: a child process of its own.
  if (argc > 1 && std::string_view(argv[1]) == kLoadFatbinsCommand) return run_load_fatbins_command(argc, argv);
  install_interrupt_exit();
  scrub_standard_streams();
  CLI::App app{
      "archbuild: build PyTorch and CUDA extensions for exactly the GPUs you have, "
      "and prove the result runs on them."};
  app.name("archbuild");  // usage lines say `archbuild build`, whatever path ran it
  app.set_version_flag("--version", std::string("archbuild ") + ARCHBUILD_VERSION);
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 success, 1 the work failed, 2 bad input or usage, "
      "3 this environment cannot do it, 130 interrupted. `archbuild help COMMAND` prints a command's reference "
      "(docs/COMMANDS.md).");
  int verbosity = 0;
  std::string log_level;
  app.add_flag("-v,--verbose", verbosity,
               "Log to stderr: -v settings, subprocesses, locks, fetch decisions; -vv debug; -vvv trace");
  app.add_option("--log-level", log_level, "error, warning (the default), verbose, debug or trace (or ARCHBUILD_LOG)")
      ->option_text("LEVEL");
  // Options a subcommand does not know go up to this app: the log options
  // work after the command word too (`archbuild build torch -v`). Set before
  // the subcommands are added, which inherit it.
  app.fallthrough();

  // `archbuild torch --arch native` is `archbuild build torch --arch native`.
  std::vector<char*> args(argv, argv + argc);
  const auto commands = command_table();
  if (const int at = command_word_index(argc, argv);
      at < argc && argv[at][0] != '-' &&
      std::none_of(commands.begin(), commands.end(), [&](const Command& c) { return c.name == argv[at]; }) &&
      names_a_recipe(argv[at])) {
    static char build[] = "build";
    args.insert(args.begin() + at, build);
  }

  std::map<CLI::App*, std::function<ExitCode()>> runners;
  // Each command's --help ends with its section of docs/COMMANDS.md, and a
  // subcommand's (cache push) with its own.
  const auto reference = command_reference_markdown();
  for (const auto& command : commands) {
    auto* sub = app.add_subcommand(command.name, command.synopsis);
    runners[sub] = command.setup(*sub);
    if (auto text = reference_section(reference, command.name)) sub->footer(*text);
    for (auto* child : sub->get_subcommands([](CLI::App*) { return true; }))
      if (auto text = reference_section(reference, command.name, child->get_name())) child->footer(*text);
  }

  try {
    app.parse(static_cast<int>(args.size()), args.data());
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return to_int(ExitCode::bad_input);
  }

  try {
    apply_log_level(verbosity, log_level);
    for (auto* sub : app.get_subcommands())
      if (auto it = runners.find(sub); it != runners.end()) return to_int(it->second());
    return to_int(ExitCode::bad_input);
  } catch (const UserError& e) {
    std::cerr << "archbuild: error: " << e.what() << "\n";
    return to_int(e.code());
  } catch (const std::filesystem::filesystem_error& e) {
    // A path the user gave that cannot be what it must (a file where a
    // directory goes, a name too long) is bad input; a disk that is full or
    // read-only, or a permission, is this environment.
    const int code = e.code().value();
    const bool bad_path = code == ENOTDIR || code == EEXIST || code == EISDIR || code == ENAMETOOLONG ||
                          code == EINVAL || code == ENOENT || code == ELOOP;
    const auto paths = e.path1().string() + (e.path2().empty() ? "" : " -> " + e.path2().string());
    if (code == ENOSPC || code == EDQUOT)
      std::cerr << "archbuild: error: no space left on " << paths << " (" << e.code().message() << ")\n";
    else
      std::cerr << "archbuild: error: " << e.code().message() << ": " << paths << "\n";
    return to_int(bad_path ? ExitCode::bad_input : ExitCode::environment);
  } catch (const std::exception& e) {
    std::cerr << "archbuild: internal error: " << e.what() << "\n";
    return to_int(ExitCode::work_failed);
  }
}
