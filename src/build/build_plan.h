#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "arch/arch_dialect.h"
#include "build/job_planner.h"
#include "recipe/recipe.h"
#include "source/source_tree.h"
#include "toolchain/host_compiler.h"
#include "toolchain/toolchain.h"

namespace archbuild {

// Everything a build needs, decided before it starts: a plain value that
// `archbuild plan` prints and the runner executes.
struct BuildPlan {
  std::string package;
  std::string recipe;
  std::string ref;
  std::string build_system;                // setup.py / pyproject
  std::string python;                      // the interpreter the build runs with
  std::filesystem::path source_dir;
  std::filesystem::path out_dir;           // log, wheels, trace, report
  std::filesystem::path wheel_dir;
  std::filesystem::path log_path;
  std::filesystem::path trace_path;
  std::vector<std::string> argv;           // no shell
  std::map<std::string, std::string> env;  // set on top of the caller's environment
  std::string arch_list;                   // TORCH_CUDA_ARCH_LIST as the recipe's dialect spells it
  ArchDialect dialect = ArchDialect::cmake;
  JobPlan jobs;
  double job_memory_gb = 0;
  bool cmake_fresh = false;
  std::string cmake_fresh_reason;
  std::map<std::string, std::string> configure_inputs;  // what, if changed, makes CMAKE_FRESH=1
  // setuptools' outputs built with other configure inputs: setuptools reuses
  // an extension that is newer than its sources (only torch's ninja backend
  // forces a rebuild), so a changed arch list would ship the old fatbins.
  // The executor removes them first; the reason is cmake_fresh_reason.
  std::vector<std::filesystem::path> stale_outputs;
  std::map<std::string, std::string> key_inputs;        // what the cache key (issue 6) hashes

  nlohmann::json to_json() const;
  // A script a user can paste: cd, exports, the command (shell-quoted).
  std::string shell_script() const;
};

struct PlanInputs {
  const Recipe* recipe = nullptr;
  ResolvedRecipe resolved;
  std::string package;
  ArchList archs;
  const Toolchain* toolchain = nullptr;
  std::optional<HostCompiler> host;
  std::filesystem::path source_dir;
  std::filesystem::path out_dir;
  std::filesystem::path cache_dir;
  std::string python;                       // absolute path of the interpreter
  std::string python_tag;                   // cp311
  JobInputs job_inputs;
  std::string compiler_launcher;            // "ccache", "sccache" or "" (none)
  std::string compiler_cache_remote;        // ccache remote storage URL, or ""
  std::optional<SourceTree> source;         // absent when planning before checkout
};

BuildPlan make_plan(const PlanInputs& inputs);

// The configure inputs of the last successful build in `source_dir`
// (recorded in .git/archbuild-configured.json), if any.
std::optional<std::map<std::string, std::string>> recorded_configure_inputs(const std::filesystem::path& source_dir);
void record_configure_inputs(const BuildPlan& plan);

// .cu files under `dir` (skipping .git and build dirs): the compile units for nvcc --threads.
size_t count_cuda_files(const std::filesystem::path& dir);

// setuptools' own outputs under `source_dir`/build (lib.*, temp.*, bdist.*);
// not a CMake build dir that happens to be called build/.
std::vector<std::filesystem::path> setuptools_build_outputs(const std::filesystem::path& source_dir);

// Whether the project's setup.py turns torch.utils.cpp_extension's ninja off
// (`use_ninja=False`, as pytorch_scatter does): then its compiles run one at
// a time whatever MAX_JOBS says.
bool compiles_one_file_at_a_time(const std::filesystem::path& dir);

}  // namespace archbuild
