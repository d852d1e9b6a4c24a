#include <fstream>
#include <iostream>
#include <sstream>

#include "cache/cache_key.h"
#include "cache/simple_index.h"
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
  return {"cache", "Cache keys and wheel indexes: `cache why A B`, `cache index DIR`", [](CLI::App& app) {
            auto why = app.add_subcommand("why", "Diff two builds' key texts (key.txt files or build dirs)");
            struct Options {
              std::string a, b;
              bool json = false;
            };
            auto options = std::make_shared<Options>();
            why->add_option("a", options->a, "First key.txt or build dir")->required();
            why->add_option("b", options->b, "Second key.txt or build dir")->required();
            why->add_flag("--json", options->json, "Print JSON");
            auto index = app.add_subcommand("index", "Write a PEP 503 simple index over a directory of wheels");
            struct IndexOptions {
              std::string wheels, index;
            };
            auto index_options = std::make_shared<IndexOptions>();
            index->add_option("wheels", index_options->wheels, "Directory of wheels")->required();
            index->add_option("--index", index_options->index, "Where the index goes (default: WHEELS/simple)");
            auto run_index = [index_options] {
              std::filesystem::path wheels = std::filesystem::absolute(index_options->wheels);
              std::filesystem::path target = index_options->index.empty() ? wheels / "simple"
                                                                          : std::filesystem::absolute(index_options->index);
              auto indexed = write_simple_index(wheels, target);
              std::cout << "indexed " << indexed.size() << " wheel" << (indexed.size() == 1 ? "" : "s") << " in "
                        << target.string() << "\n";
              for (const auto& wheel : indexed)
                std::cout << "  " << wheel.project << "  " << wheel.file.filename().string() << "\n";
              std::cout << "pip install --index-url file://" << target.string() << " PROJECT\n"
                        << "pip install --find-links " << wheels.string() << " PROJECT\n";
              return ExitCode::success;
            };
            app.require_subcommand(1);
            app.footer("Exit (why): 0 the keys are equal; 1 they differ (the differences are listed). 2 bad input.");
            return [options, index, run_index]() -> ExitCode {
              if (index->parsed()) return run_index();
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
