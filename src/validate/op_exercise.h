#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace archbuild {

// One run of the generic op exerciser (recipes/tests/exercise_ops.py): the
// ops a package registers through torch.library, fed inputs generated from
// their schemas, run on the CPU and on each GPU and compared (or, for SASS
// against PTX, compared with the saved outputs of the native run).
struct OpExerciseRequest {
  std::string venv_python;               // the validation venv, the wheel installed in it
  std::vector<std::string> packages;     // what to import
  std::vector<std::string> also_import;  // subpackages holding native libraries, imported best-effort after
  std::filesystem::path script;          // exercise_ops.py
  std::filesystem::path result_file;     // the script's JSON
  std::filesystem::path log_file;
  std::filesystem::path outputs;    // saved by the native run, compared with by the PTX run
  bool compare_with_saved = false;  // false: CPU reference, save outputs; true: compare with them
  std::string label;                // "native" or "ptx"
  double budget_seconds = 120;
  std::map<std::string, std::optional<std::string>> env;
  std::filesystem::path work_dir;  // the working directory (never the source tree)
};

struct OpExercise {
  bool ran = false;         // the script ran and wrote its result
  bool no_torch = false;    // the venv has no torch: nothing to exercise (not a failure)
  bool no_package = false;  // the wheel installs no importable package: nothing to import (not a failure)
  std::string label;
  int exit_code = 0;  // 0 no mismatch, 1 mismatch, 2 a package did not import
  size_t ops_found = 0, exercised = 0, failed = 0, skipped = 0;
  size_t compared = 0;  // of the exercised, those whose GPU results were compared with the CPU's
  bool budget_exhausted = false;
  std::string summary;    // the script's one line, or why it did not run
  nlohmann::json report;  // the script's whole result
  double seconds = 0;
  std::filesystem::path log;

  bool ok() const { return no_torch || no_package || (ran && exit_code == 0); }
  nlohmann::json to_json() const;
};

OpExercise run_op_exercise(const OpExerciseRequest& request);

}  // namespace archbuild
