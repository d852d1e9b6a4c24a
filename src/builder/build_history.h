#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "builder/ninja_trace.h"

namespace archbuild {

// What one finished build step took, kept to predict the next one
// (builder/build_time_model.h). One JSON line per build in
// <cache>/history/RECIPE.jsonl.
struct BuildTimeRecord {
  std::string recipe;
  std::string source;  // what was built (SourceTarget::identity): two projects of one recipe differ
  std::string ref;
  std::string arch_list;       // canonical
  std::string compile_inputs;  // what a compile cache's hits depend on: same value, same objects
  size_t code_images = 1;      // SASS + PTX images each nvcc call makes
  unsigned parallelism = 1;    // compiles at once (1 when setup.py compiles one file at a time)
  unsigned nvcc_threads = 1;   // nvcc --threads: images of one call compiled at once
  unsigned cores = 1;
  bool compile_cache = false;  // ran with ccache / sccache
  bool warm = false;           // its compile cache already held these compile inputs
  bool clean = true;           // no earlier build in the work tree: every step ran
  double wall_seconds = 0;     // the build step, configure to wheel
  double serial_seconds = 0;   // outside the compile steps: configure, link tail, the wheel
  double span_seconds = 0;     // first step start to last step end
  double nvcc_seconds = 0;     // the nvcc steps' durations, summed
  double other_seconds = 0;    // every other step's
  double cpu_seconds = 0;      // every process of the build
  uint64_t tree_bytes = 0;     // the work tree after the build (sources and build dirs)
  std::string finished_at;     // UTC

  nlohmann::json to_json() const;
  static BuildTimeRecord from_json(const nlohmann::json& json);
};

// Splits a build's steps into nvcc steps (an output the nvcc log names, or
// CMake's `.cu.o` / `.cuda.o` objects) and the rest, and fills the record's
// span, step sums and serial time. Without steps (a build with no ninja),
// the whole wall time counts as nvcc steps at the record's parallelism.
void fill_step_times(BuildTimeRecord& record, const std::vector<NinjaStep>& steps,
                     const std::vector<std::string>& nvcc_outputs);

std::filesystem::path build_history_file(const std::filesystem::path& cache_dir, const std::string& recipe);
// Appends one line (O_APPEND: builds running at once never interleave).
void append_build_history(const std::filesystem::path& cache_dir, const BuildTimeRecord& record);
// The recipe's records, oldest first; only the file's last 1 MB is read and
// lines that are not records are skipped.
std::vector<BuildTimeRecord> read_build_history(const std::filesystem::path& cache_dir, const std::string& recipe);

// Bytes of the regular files under `dir` (no link followed; .git skipped: it
// borrows the mirror's objects).
uint64_t tree_bytes(const std::filesystem::path& dir);

}  // namespace archbuild
