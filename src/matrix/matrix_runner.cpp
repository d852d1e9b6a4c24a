#include "matrix/matrix_runner.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>

#include "builder/job_planner.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "core/regular_file.h"
#include "core/strings.h"
#include "core/system_info.h"
#include "pipeline/build_context.h"
#include "pipeline/build_session.h"
#include "ui/build_progress_line.h"
#include "validate/validation_output.h"

namespace archbuild {

std::string to_string(CellState state) {
  switch (state) {
    case CellState::pending: return "pending";
    case CellState::running: return "running";
    case CellState::ok: return "ok";
    case CellState::failed: return "failed";
    case CellState::skipped: return "skipped";
  }
  return "pending";
}

namespace {

std::FILE* open_cell_log(const std::filesystem::path& log) {
  try {
    return open_output_stream(log);
  } catch (const std::filesystem::filesystem_error& error) {
    fail_environment("cannot write the cell log " + log.string() + ": " + error.code().message());
  }
}

// A cell's pipeline events: stage lines and the status line, plain, in its log.
class CellLogEvents : public PipelineEvents {
 public:
  explicit CellLogEvents(const std::filesystem::path& log) : file_(open_cell_log(log)), status_(file_) {}
  ~CellLogEvents() override {
    status_.clear();
    if (file_) std::fclose(file_);
  }
  void stage(const std::string& stage, const std::string& text, Tone) override {
    status_.print(stage_line(stage, text));
  }
  void validation(const WheelValidation& validation) override {
    print_validation(
        validation, [&](const std::string& text) { stage("", text, Tone::plain); }, file_ ? file_ : stderr);
  }
  StatusLine& status() override { return status_; }
  BuildProgressSink& build_progress() override { return progress_; }

 private:
  std::FILE* file_;
  StatusLine status_;
  BuildProgressLine progress_{status_};
};

BuildRequest cell_request(const MatrixCell& cell, const MatrixRunOptions& options, const std::filesystem::path& out) {
  BuildRequest request;
  request.what = cell.recipe;
  request.arch = cell.arch;
  request.ref = cell.ref;
  request.cuda = cell.cuda;
  request.out = out;
  request.mirrors = options.mirrors;
  request.setting_flags = {{"cache_dir", options.cache_dir.string()},
                           {"jobs", std::to_string(options.jobs_per_cell)},
                           {"python", options.python},
                           {"offline", options.offline ? "true" : ""},
                           {"recipe_path", options.recipe_path}};
  return request;
}

}  // namespace

std::vector<CellResult> run_build_matrix(const BuildMatrix& matrix, const MatrixRunOptions& options,
                                         const std::function<void(size_t, const CellResult&)>& on_change) {
  std::vector<CellResult> results(matrix.cells.size());
  std::mutex mutex;
  std::condition_variable changed;
  const auto start = std::chrono::steady_clock::now();
  auto now = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  // The next cell to run, or none; cells whose dependency failed become skipped here.
  auto pick = [&](std::unique_lock<std::mutex>& lock) -> std::optional<size_t> {
    while (true) {
      bool waiting = false;
      for (size_t i = 0; i < results.size(); ++i) {
        if (results[i].status != CellState::pending) continue;
        bool ready = true;
        std::string broken;
        for (size_t need : matrix.cells[i].needs) {
          const auto state = results[need].status;
          if (state == CellState::failed || state == CellState::skipped)
            broken = matrix.cells[need].name();
          else if (state != CellState::ok)
            ready = false;
        }
        // Ctrl-C stops the running cells (their builds see it) and starts no new one.
        if (pending_interrupt() && broken.empty()) broken = "an interrupt";
        if (!broken.empty()) {
          results[i].status = CellState::skipped;
          results[i].message = pending_interrupt() ? "not started: archbuild was interrupted"
                                                   : "needs " + broken + ", which did not build";
          results[i].started = results[i].finished = now();
          on_change(i, results[i]);
          changed.notify_all();
          continue;
        }
        if (ready) return i;
        waiting = true;
      }
      if (!waiting) return std::nullopt;
      changed.wait(lock);
    }
  };

  auto worker = [&] {
    std::unique_lock<std::mutex> lock(mutex);
    while (auto index = pick(lock)) {
      const auto& cell = matrix.cells[*index];
      auto& result = results[*index];
      result.status = CellState::running;
      result.started = now();
      auto out = options.out_dir / (std::to_string(*index + 1) + "-" +
                                    path_safe(cell.recipe + "-" + cell.ref + "-" + cell.arch + "-" + cell.cuda));
      result.log = out / "archbuild.log";
      on_change(*index, result);
      lock.unlock();

      const auto request = cell_request(cell, options, out);
      CellState state = CellState::failed;
      int exit_code = to_int(ExitCode::work_failed);
      std::string message;
      bool cache_hit = false;
      std::vector<std::string> wheels;
      // Nothing may escape a worker thread: it would end the whole matrix
      // (std::terminate) with other cells' builds still running.
      try {
        build_out_dir(out).claim();  // marked before its log goes in: the build then takes the dir as its own
        CellLogEvents events(result.log);
        try {
          auto outcome = run_build(request, events);
          exit_code = to_int(outcome.exit);
          state = outcome.exit == ExitCode::success ? CellState::ok : CellState::failed;
          cache_hit = outcome.report.cache_hit;
          for (const auto& wheel : outcome.report.wheels) wheels.push_back(wheel.file);
          if (state != CellState::ok)
            message = outcome.exit == ExitCode::interrupted ? "interrupted"
                      : !outcome.result.error_excerpt.empty()
                          ? outcome.result.error_excerpt.front()
                          : "the build or its validation failed (see " + result.log.string() + ")";
        } catch (const UserError& error) {
          exit_code = to_int(error.code());
          message = std::string("archbuild: error: ") + error.what();  // as `archbuild build` says it
          events.stage("error", error.what(), Tone::failure);
        }
      } catch (const std::exception& error) {
        message = std::string("archbuild: internal error: ") + error.what();
      } catch (...) {
        message = "archbuild: internal error";
      }

      lock.lock();
      result.finished = now();
      result.exit_code = exit_code;
      result.status = state;
      result.cache_hit = cache_hit;
      result.wheels = wheels;
      if (state != CellState::ok) result.message = "exit " + std::to_string(exit_code) + ": " + message;
      on_change(*index, result);
      changed.notify_all();
    }
  };
  std::vector<std::thread> workers;
  for (unsigned i = 0; i < std::max(1u, options.parallel); ++i) workers.emplace_back(worker);
  for (auto& thread : workers) thread.join();
  return results;
}

nlohmann::json matrix_report_json(const BuildMatrix& matrix, const std::vector<CellResult>& results) {
  auto cells = nlohmann::json::array();
  size_t failed = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& cell = matrix.cells[i];
    const auto& result = results[i];
    failed += result.status != CellState::ok;
    std::vector<std::string> needs;
    for (size_t need : cell.needs) needs.push_back(matrix.cells[need].name());
    cells.push_back({{"name", cell.name()},
                     {"recipe", cell.recipe},
                     {"ref", cell.ref},
                     {"arch", cell.arch},
                     {"cuda", cell.cuda},
                     {"needs", needs},
                     {"status", to_string(result.status)},
                     {"exit_code", result.exit_code},
                     {"started", result.started},
                     {"finished", result.finished},
                     {"seconds", result.seconds()},
                     {"cache_hit", result.cache_hit},
                     {"wheels", result.wheels},
                     {"message", result.message},
                     {"log", result.log.string()}});
  }
  return {{"ok", failed == 0}, {"cells", cells}, {"failed", failed}};
}

std::string matrix_junit_xml(const BuildMatrix& matrix, const std::vector<CellResult>& results) {
  size_t failures = 0, skipped = 0;
  double total = 0;
  std::string cases;
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& result = results[i];
    total += result.seconds();
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.3f", result.seconds());
    cases += "    <testcase classname=\"archbuild." + markup_escape(matrix.cells[i].recipe) + "\" name=\"" +
             markup_escape(matrix.cells[i].name()) + "\" time=\"" + seconds + "\">";
    if (result.status == CellState::failed) {
      ++failures;
      cases += "\n      <failure message=\"" + markup_escape(result.message) +
               "\">log: " + markup_escape(result.log.string()) + "</failure>\n    ";
    } else if (result.status == CellState::skipped) {
      ++skipped;
      cases += "\n      <skipped message=\"" + markup_escape(result.message) + "\"/>\n    ";
    } else if (!result.wheels.empty()) {
      cases += "\n      <system-out>" + markup_escape(join(result.wheels, "\n")) + "</system-out>\n    ";
    }
    cases += "</testcase>\n";
  }
  char time[32];
  std::snprintf(time, sizeof time, "%.3f", total);
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"archbuild matrix\" tests=\"" +
         std::to_string(results.size()) + "\" failures=\"" + std::to_string(failures) + "\" errors=\"0\" skipped=\"" +
         std::to_string(skipped) + "\" time=\"" + time + "\">\n" + cases + "  </testsuite>\n</testsuites>\n";
}

MatrixJobBudget matrix_job_budget(const BuildMatrix& matrix, const RecipeBook& book, unsigned jobs_option,
                                  unsigned parallel, unsigned cores, uint64_t available_memory_bytes) {
  MatrixJobBudget budget;
  budget.total = jobs_option ? jobs_option : matrix.jobs;
  if (!budget.total) {
    JobInputs machine;
    machine.cores = cores;
    machine.available_memory_bytes = available_memory_bytes;
    // Never below plan_jobs' default estimate, as for a single build.
    for (const auto& cell : matrix.cells)
      machine.job_memory_gb = std::max(machine.job_memory_gb, matrix_cell_recipe(cell, book).job_memory_gb);
    budget.total = plan_jobs(machine).jobs;
  }
  budget.per_cell = std::max(1u, budget.total / std::max(1u, parallel));
  return budget;
}

MatrixJobBudget matrix_job_budget(const BuildMatrix& matrix, const RecipeBook& book, unsigned jobs_option,
                                  unsigned parallel) {
  return matrix_job_budget(matrix, book, jobs_option, parallel, cpu_count(), available_memory_bytes().value_or(0));
}

}  // namespace archbuild
