#include <fstream>
#include <iomanip>
#include <iostream>

#include "cli/command.h"
#include "cli/common_options.h"
#include "cli/json_output.h"
#include "config/settings.h"
#include "core/cache_layout.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "core/regular_file.h"
#include "core/strings.h"
#include "core/user_path.h"
#include "matrix/build_matrix.h"
#include "matrix/matrix_runner.h"
#include "ui/terminal.h"

namespace archbuild {

Command matrix_command() {
  return {
      "matrix", "Build recipes x arch sets x refs x toolkits from a TOML file, dependencies first", [](CLI::App& app) {
        struct Options {
          std::string file, junit;
          std::vector<std::string> mirrors;
          SettingFlags settings;
          unsigned parallel = 1, jobs = 0;
          bool json = false, dry_run = false;
        };
        auto options = std::make_shared<Options>();
        app.add_option("file", options->file, "The matrix (docs/MATRIX.md)")->required();
        app.add_option("--parallel", options->parallel, "Cells built at once (default 1)")->check(CLI::Range(1u, 64u));
        app.add_option("--jobs", options->jobs,
                       "Compile jobs for the whole matrix (default: the file's, or the cores)");
        add_cache_dir_option(app, options->settings.cache_dir);
        add_python_option(app, options->settings.python, "Interpreter the builds run with");
        add_mirror_option(app, options->mirrors);
        add_offline_flag(app, options->settings.offline);
        add_recipe_path_option(app, options->settings.recipe_path);
        app.add_option("--junit", options->junit, "Write JUnit XML here (one testcase per cell)");
        add_json_flag(app, options->json, "Print the JSON report");
        app.add_flag("--dry-run", options->dry_run, "List the cells in the order they would run, build nothing");
        return [options]() {
          // Where the JUnit report goes is checked before any cell runs: not
          // found unwritable after the whole matrix was built.
          std::filesystem::path junit;
          if (!options->junit.empty()) {
            junit = checked_user_path(options->junit, "--junit");
            std::error_code ec;
            const auto status = std::filesystem::symlink_status(junit, ec);
            if (std::filesystem::is_directory(status))
              fail_bad_input("--junit " + junit.string() + " is a directory: give the report's file name");
            if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status) &&
                !std::filesystem::is_symlink(status))
              fail_bad_input("--junit " + junit.string() + " is not a regular file (a FIFO, a device?)");
            if (!std::filesystem::is_directory(junit.parent_path(), ec))
              fail_bad_input("--junit " + junit.string() + ": its directory " + junit.parent_path().string() +
                             " does not exist");
          }
          auto settings = Settings::load(options->settings.by_key());
          auto book = RecipeBook::load_for(settings);
          auto matrix = load_build_matrix(options->file, book);
          if (options->dry_run) {
            auto cells = matrix_report_json(matrix, std::vector<CellResult>(matrix.cells.size()))["cells"];
            if (options->json) {
              print_json({{"cells", cells}});
            } else {
              for (const auto& cell : cells)
                std::cout << cell["name"].get<std::string>()
                          << (cell["needs"].empty()
                                  ? ""
                                  : "  (after " + join(cell["needs"].get<std::vector<std::string>>(), ", ") + ")")
                          << "\n";
              std::cout << matrix.cells.size() << " cells\n";
            }
            return ExitCode::success;
          }
          MatrixRunOptions run;
          run.cache_dir = settings.made_cache_dir();
          run.out_dir = CacheLayout(run.cache_dir).matrix();
          run.parallel = options->parallel;
          const auto budget = matrix_job_budget(matrix, book, options->jobs, run.parallel);
          run.jobs_per_cell = budget.per_cell;
          run.python = options->settings.python;
          run.mirrors = options->mirrors;
          run.offline = settings.offline();
          run.recipe_path = options->settings.recipe_path;
          if (!options->json)
            std::cout << matrix.cells.size() << " cells, " << run.parallel << " at once, " << run.jobs_per_cell
                      << " compile jobs each (budget " << budget.total << ")\n"
                      << std::flush;
          size_t done = 0;
          auto results = run_build_matrix(matrix, run, [&](size_t index, const CellResult& result) {
            if (options->json) return;
            const auto& cell = matrix.cells[index];
            if (result.status == CellState::running) {
              std::cout << "start  " << cell.name() << "\n" << std::flush;
              return;
            }
            ++done;
            auto word = result.status == CellState::ok        ? verdict_label(CheckVerdict::ok)
                        : result.status == CellState::skipped ? verdict_label(CheckVerdict::skip)
                                                              : verdict_label(CheckVerdict::fail);
            char seconds[32];
            std::snprintf(seconds, sizeof seconds, "%.1f s", result.seconds());
            std::cout << "[" << done << "/" << matrix.cells.size() << "] " << word << " " << cell.name() << " ("
                      << seconds << (result.cache_hit ? ", cache hit" : "") << ")"
                      << (result.message.empty() ? "" : ": " + result.message) << "\n"
                      << std::flush;
          });
          auto report = matrix_report_json(matrix, results);
          if (!junit.empty()) write_file_atomically(junit, matrix_junit_xml(matrix, results));
          if (options->json) {
            print_json(report);
          } else {
            std::cout << "\n"
                      << std::left << std::setw(44) << "CELL" << std::setw(9) << "RESULT" << std::setw(10) << "TIME"
                      << "WHEEL / REASON\n";
            for (size_t i = 0; i < results.size(); ++i) {
              char seconds[32];
              std::snprintf(seconds, sizeof seconds, "%.1f s", results[i].seconds());
              std::cout << std::left << std::setw(44) << matrix.cells[i].name() << std::setw(9)
                        << to_string(results[i].status) << std::setw(10) << seconds
                        << (results[i].status == CellState::ok ? join(results[i].wheels, ", ") : results[i].message)
                        << "\n";
            }
            if (!options->junit.empty()) std::cout << "JUnit: " << options->junit << "\n";
          }
          if (pending_interrupt()) return ExitCode::interrupted;
          return report["ok"].get<bool>() ? ExitCode::success : ExitCode::work_failed;
        };
      }};
}

}  // namespace archbuild
