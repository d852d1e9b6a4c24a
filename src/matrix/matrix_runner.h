#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "matrix/build_matrix.h"

namespace archbuild {

enum class CellState { pending, running, ok, failed, skipped };
std::string to_string(CellState state);  // "pending", "running", "ok", "failed", "skipped"

struct CellResult {
  CellState status = CellState::pending;
  int exit_code = 0;
  double started = 0, finished = 0;  // seconds since the matrix started
  std::string message;               // why it failed or was skipped
  std::vector<std::string> wheels;
  bool cache_hit = false;
  std::filesystem::path log;
  double seconds() const { return finished - started; }
};

struct MatrixRunOptions {
  std::filesystem::path cache_dir;
  std::filesystem::path out_dir;     // one dir per cell: its build.log, report.json, archbuild's own output
  unsigned parallel = 1;             // cells at once
  unsigned jobs_per_cell = 1;        // the global budget split between them
  std::string python;                // --python for every cell ("" : the setting)
  std::vector<std::string> mirrors;  // --mirror rules for every cell
  bool offline = false;
  std::string recipe_path;  // --recipe-path for every cell ("": the setting)
};

// One compile-job budget for the whole matrix, and each running cell's share.
struct MatrixJobBudget {
  unsigned total = 1;     // --jobs, else the file's `jobs`, else what the machine allows
  unsigned per_cell = 1;  // total / parallel, at least 1
};

// `jobs_option` (--jobs; 0 = not given) wins, then the matrix file's `jobs`;
// else plan_jobs for `cores` and `available_memory_bytes` (0 = unknown) with
// the per-job memory of the cells' hungriest recipe. Pure: no I/O.
MatrixJobBudget matrix_job_budget(const BuildMatrix& matrix, const RecipeBook& book, unsigned jobs_option,
                                  unsigned parallel, unsigned cores, uint64_t available_memory_bytes);

// The same for this machine's cores and available memory.
MatrixJobBudget matrix_job_budget(const BuildMatrix& matrix, const RecipeBook& book, unsigned jobs_option,
                                  unsigned parallel);

// Runs every cell through the build pipeline in this process, up to
// `parallel` at once (one thread each; each build is its own process group,
// so an interrupt stops them all), a cell only after the cells it needs
// succeeded (one whose dependency failed is skipped, naming it); a failed
// cell never stops the others. Each cell's stage lines and status go to its
// archbuild.log. `on_change` sees each cell start and finish.
std::vector<CellResult> run_build_matrix(const BuildMatrix& matrix, const MatrixRunOptions& options,
                                         const std::function<void(size_t, const CellResult&)>& on_change);

nlohmann::json matrix_report_json(const BuildMatrix& matrix, const std::vector<CellResult>& results);

// JUnit XML (one testcase per cell, <failure> / <skipped> with the reason),
// so that CI systems show each cell as a test.
std::string matrix_junit_xml(const BuildMatrix& matrix, const std::vector<CellResult>& results);

}  // namespace archbuild
