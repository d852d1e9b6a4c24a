#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <iostream>
#include <map>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "builder/step_launcher.h"
#include "cli/command.h"
#include "config/settings.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "gpu/module_loader.h"
#include "recipe/recipe.h"

namespace {
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
  // The driver-API fatbin loader of device validation: a child process of its own.
  if (argc > 1 && std::string_view(argv[1]) == kLoadFatbinsCommand) return run_load_fatbins_command(argc, argv);
  install_interrupt_exit();
  CLI::App app{
      "archbuild: build PyTorch and CUDA extensions for exactly the GPUs you have, "
      "and prove the result runs on them."};
  app.set_version_flag("--version", std::string("archbuild ") + ARCHBUILD_VERSION);
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 success, 1 the work failed, 2 bad input or usage, "
      "3 this environment cannot do it, 130 interrupted. See README.md.");

  // `archbuild torch --arch native` is `archbuild build torch --arch native`.
  std::vector<char*> args(argv, argv + argc);
  const auto commands = command_table();
  if (argc > 1 && argv[1][0] != '-' &&
      std::none_of(commands.begin(), commands.end(), [&](const Command& c) { return c.name == argv[1]; }) &&
      names_a_recipe(argv[1])) {
    static char build[] = "build";
    args.insert(args.begin() + 1, build);
  }

  std::map<CLI::App*, std::function<ExitCode()>> runners;
  for (const auto& command : commands) {
    auto* sub = app.add_subcommand(command.name, command.synopsis);
    runners[sub] = command.setup(*sub);
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
