#include "matrix/matrix_runner.h"

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>

#include "core/self_executable.h"
#include "core/strings.h"
#include "process/run_process.h"
#include "source/source_target.h"

namespace archbuild {

namespace {

std::string last_line(const std::string& text) {
  auto lines = split_any(text, "\n");
  for (auto it = lines.rbegin(); it != lines.rend(); ++it)
    if (it->find("archbuild: error:") != std::string::npos) return trim(*it);
  return lines.empty() ? "" : trim(lines.back());
}

}  // namespace

std::vector<CellResult> run_build_matrix(const BuildMatrix& matrix, const MatrixRunOptions& options,
                                         const std::function<void(size_t, const CellResult&)>& on_change) {
  std::vector<CellResult> results(matrix.cells.size());
  std::mutex mutex;
  std::condition_variable changed;
  const auto start = std::chrono::steady_clock::now();
  auto now = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  const std::string self = self_executable();

  // The next cell to run, or none; cells whose dependency failed become skipped here.
  auto pick = [&](std::unique_lock<std::mutex>& lock) -> std::optional<size_t> {
    while (true) {
      bool waiting = false;
      for (size_t i = 0; i < results.size(); ++i) {
        if (results[i].status != "pending") continue;
        bool ready = true;
        std::string broken;
        for (size_t need : matrix.cells[i].needs) {
          const auto& status = results[need].status;
          if (status == "failed" || status == "skipped") broken = matrix.cells[need].name();
          else if (status != "ok") ready = false;
        }
        if (!broken.empty()) {
          results[i].status = "skipped";
          results[i].message = "needs " + broken + ", which did not build";
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
      result.status = "running";
      result.started = now();
      auto out = options.out_dir / (std::to_string(*index + 1) + "-" + path_safe(cell.recipe + "-" + cell.ref + "-" + cell.arch + "-" + cell.cuda));
      result.log = out / "archbuild.log";
      on_change(*index, result);
      lock.unlock();

      std::vector<std::string> argv = {self, "build", cell.recipe, "--arch", cell.arch, "--jobs",
                                       std::to_string(options.jobs_per_cell), "--cache-dir", options.cache_dir.string(),
                                       "--out", out.string(), "--json"};
      if (!cell.ref.empty()) argv.insert(argv.end(), {"--ref", cell.ref});
      if (!cell.cuda.empty()) argv.insert(argv.end(), {"--cuda", cell.cuda});
      argv.insert(argv.end(), options.extra_args.begin(), options.extra_args.end());
      std::filesystem::create_directories(out);
      ProcessOptions process;
      process.env_overrides["NO_COLOR"] = "1";
      auto run = run_process(argv, process);
      std::ofstream(result.log) << "$ " << join(argv, " ") << "\n" << run.err;
      auto report = nlohmann::json::parse(run.out, nullptr, false);

      lock.lock();
      result.finished = now();
      result.exit_code = run.signaled ? 128 + run.signal : run.exit_code;
      result.status = run.succeeded() ? "ok" : "failed";
      if (report.is_object()) {
        result.cache_hit = report.value("cache_hit", false);
        for (const auto& wheel : report.value("wheels", nlohmann::json::array()))
          if (wheel.is_object()) result.wheels.push_back(wheel.value("file", ""));
      }
      if (!run.succeeded()) result.message = run.describe_status() + ": " + last_line(run.err);
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
    failed += result.status != "ok";
    std::vector<std::string> needs;
    for (size_t need : cell.needs) needs.push_back(matrix.cells[need].name());
    cells.push_back({{"name", cell.name()}, {"recipe", cell.recipe}, {"ref", cell.ref}, {"arch", cell.arch},
                     {"cuda", cell.cuda}, {"needs", needs}, {"status", result.status}, {"exit_code", result.exit_code},
                     {"started", result.started}, {"finished", result.finished}, {"seconds", result.seconds()},
                     {"cache_hit", result.cache_hit}, {"wheels", result.wheels}, {"message", result.message},
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
    if (result.status == "failed") {
      ++failures;
      cases += "\n      <failure message=\"" + markup_escape(result.message) + "\">log: " + markup_escape(result.log.string()) +
               "</failure>\n    ";
    } else if (result.status == "skipped") {
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

}  // namespace archbuild
