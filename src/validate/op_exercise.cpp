#include "validate/op_exercise.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/regular_file.h"
#include "core/strings.h"
#include "process/run_process.h"

namespace archbuild {

nlohmann::json OpExercise::to_json() const {
  nlohmann::json json = {{"ran", ran},
                         {"no_torch", no_torch},
                         {"label", label},
                         {"ok", ok()},
                         {"exit_code", exit_code},
                         {"ops_found", ops_found},
                         {"exercised_count", exercised},
                         {"compared_count", compared},
                         {"failed_count", failed},
                         {"skipped_count", skipped},
                         {"budget_exhausted", budget_exhausted},
                         {"summary", summary},
                         {"seconds", seconds},
                         {"log", log.string()}};
  // The script's lists (exercised, failed, skipped ops with inputs and differences) as it wrote them.
  for (const char* key : {"exercised", "failed", "skipped", "namespaces", "devices", "reference"})
    if (report.is_object() && report.contains(key)) json[key] = report[key];
  return json;
}

namespace {
size_t list_size(const nlohmann::json& report, const char* key) {
  return report.contains(key) && report[key].is_array() ? report[key].size() : 0;
}

// Exercised ops whose GPU results were compared with the CPU's ("cpu+cuda",
// "pybind cpu+cuda"), not only with themselves ("cuda-only").
size_t compared_with_cpu(const nlohmann::json& report) {
  if (!report.contains("exercised") || !report["exercised"].is_array()) return 0;
  return std::count_if(report["exercised"].begin(), report["exercised"].end(), [](const nlohmann::json& entry) {
    const auto category = entry.is_object() && entry.contains("category") && entry["category"].is_string()
                              ? entry["category"].get<std::string>()
                              : std::string();
    return category.ends_with("cpu+cuda");
  });
}
}  // namespace

OpExercise run_op_exercise(const OpExerciseRequest& request) {
  OpExercise exercise;
  exercise.label = request.label;
  exercise.log = request.log_file;
  if (request.packages.empty() && request.also_import.empty()) {
    exercise.no_package = true;
    exercise.summary = "the wheel installs no importable package: no op to exercise";
    return exercise;
  }
  std::vector<std::string> argv = {request.venv_python, request.script.string()};
  argv.insert(argv.end(), request.packages.begin(), request.packages.end());
  char budget[32];
  std::snprintf(budget, sizeof budget, "%.0f", std::max(1.0, request.budget_seconds));
  argv.insert(argv.end(), {"--out", request.result_file.string(), "--budget-s", budget, "--label", request.label,
                           request.compare_with_saved ? "--compare-with" : "--save", request.outputs.string()});
  for (const auto& module : request.also_import) argv.insert(argv.end(), {"--also-import", module});
  std::filesystem::remove(request.result_file);
  ProcessOptions options;
  options.working_dir = request.work_dir;
  options.env_overrides = request.env;
  options.env_overrides["PYTHONSAFEPATH"] = "1";
  options.env_overrides["PYTHONDONTWRITEBYTECODE"] = "1";
  // The script keeps its own budget; this is the backstop for a supervisor that hangs.
  options.timeout = std::chrono::seconds(static_cast<long long>(request.budget_seconds) + 120);
  auto started = std::chrono::steady_clock::now();
  auto run = run_process(argv, options);
  exercise.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  write_whole_file(request.log_file, "$ " + join(argv, " ") + "\n" + run.out + run.err);
  exercise.exit_code = run.status.shell_code();
  if (!run.timed_out && !run.status.signaled && run.status.code == 3) {
    exercise.no_torch = true;
    exercise.summary = "not run: torch does not import in the validation venv (the exerciser needs it)";
    return exercise;
  }
  std::string text;
  if (!read_regular_file(request.result_file, 64 << 20, text).empty()) {
    exercise.summary = "the exerciser wrote no result (" + run.describe_status() + "); see " +
                       request.log_file.string();
    if (exercise.exit_code == 0) exercise.exit_code = 1;
    return exercise;
  }
  auto report = nlohmann::json::parse(text, nullptr, false);
  if (!report.is_object()) {
    exercise.summary = "the exerciser's result is not a JSON object; see " + request.log_file.string();
    if (exercise.exit_code == 0) exercise.exit_code = 1;
    return exercise;
  }
  exercise.ran = true;
  exercise.report = report;
  try {
    exercise.ops_found = report.value("ops_found", size_t{0});
    exercise.budget_exhausted = report.value("budget_exhausted", false);
  } catch (const nlohmann::json::exception&) {  // a field of another type: counted from the lists alone
  }
  exercise.exercised = list_size(report, "exercised");
  exercise.compared = compared_with_cpu(report);
  exercise.failed = list_size(report, "failed");
  exercise.skipped = list_size(report, "skipped");
  exercise.summary = report.contains("summary") && report["summary"].is_string() ? report["summary"].get<std::string>()
                                                                                 : run.describe_status();
  if (run.timed_out) {
    exercise.exit_code = 1;
    exercise.summary = "stopped by archbuild after " + std::to_string(static_cast<int>(exercise.seconds)) +
                       " s: " + exercise.summary;
  }
  return exercise;
}

}  // namespace archbuild
