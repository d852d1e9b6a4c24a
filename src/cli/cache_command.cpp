#include <fstream>
#include <iostream>
#include <sstream>

#include "cache/cache_key.h"
#include "cli/command.h"
#include "cli/host_context.h"
#include "core/error.h"
#include "ui/terminal.h"

namespace archbuild {

namespace {
// A key text from a key file or from a build's out dir (its key.txt).
std::string read_key_text(const std::string& where) {
  std::filesystem::path path(where);
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) path /= "key.txt";
  std::ifstream in(path);
  if (!in) fail_bad_input("no cache key text at " + path.string() + " (give a key.txt or a build's --out dir)");
  std::stringstream text;
  text << in.rdbuf();
  if (text.str().rfind("cache_format ", 0) != 0) fail_bad_input(path.string() + " is not an archbuild key text");
  return text.str();
}
}  // namespace

Command cache_command() {
  return {"cache", "Inspect cache keys: `cache why A B` says which inputs differ", [](CLI::App& app) {
            auto why = app.add_subcommand("why", "Diff two builds' key texts (key.txt files or build dirs)");
            struct Options {
              std::string a, b;
              bool json = false;
            };
            auto options = std::make_shared<Options>();
            why->add_option("a", options->a, "First key.txt or build dir")->required();
            why->add_option("b", options->b, "Second key.txt or build dir")->required();
            why->add_flag("--json", options->json, "Print JSON");
            app.require_subcommand(1);
            app.footer("Exit: 0 the keys are equal; 1 they differ (the differences are listed); 2 bad input.");
            return [options]() {
              auto differences = diff_key_texts(read_key_text(options->a), read_key_text(options->b));
              if (options->json) {
                auto list = nlohmann::json::array();
                for (const auto& d : differences) list.push_back({{"key", d.key}, {"a", d.before}, {"b", d.after}});
                print_json({{"same", differences.empty()}, {"differences", list}});
              } else if (differences.empty()) {
                std::cout << "same key: every input is equal\n";
              } else {
                for (const auto& d : differences)
                  std::cout << paint(d.key, Style::bold) << "\n  - " << (d.before.empty() ? "(absent)" : d.before)
                            << "\n  + " << (d.after.empty() ? "(absent)" : d.after) << "\n";
              }
              return differences.empty() ? ExitCode::success : ExitCode::work_failed;
            };
          }};
}

}  // namespace archbuild
