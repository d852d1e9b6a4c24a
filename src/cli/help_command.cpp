#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "core/error.h"

namespace archbuild {

// `archbuild help [COMMAND [SUBCOMMAND]]`: the command's own --help, whose
// footer is its section of docs/COMMANDS.md (main.cpp sets it), or the list
// of commands.
Command help_command() {
  return {"help", "Print a command's reference (the same text as docs/COMMANDS.md)", [](CLI::App& app) {
            auto words = std::make_shared<std::vector<std::string>>();
            app.add_option("command", *words, "A command, and for cache a subcommand (archbuild help cache push)")
                ->expected(0, 2);
            return [&app, words]() {
              CLI::App* top = app.get_parent();
              CLI::App* target = top;
              std::string path = top->get_name();
              for (const auto& word : *words) {
                CLI::App* next = nullptr;
                try {
                  next = target->get_subcommand(word);
                } catch (const CLI::OptionNotFound&) {
                }
                if (next == nullptr) fail_bad_input("no such command: '" + word + "' (archbuild help lists them)");
                target = next;
                path += " " + word;
              }
              // The formatter, not App::help(): that would show the parsed
              // subcommand's (this one's) help instead of the one asked for.
              std::cout << target->get_formatter()->make_help(target, path, CLI::AppFormatMode::Normal);
              return ExitCode::success;
            };
          }};
}

}  // namespace archbuild
