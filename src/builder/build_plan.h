#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "arch/arch_dialect.h"
#include "builder/arch_enforcement_plan.h"
#include "builder/build_time_model.h"
#include "builder/compile_cluster_plan.h"
#include "builder/compiler_launchers.h"
#include "builder/configure_plan.h"
#include "builder/job_planner.h"
#include "builder/network_plan.h"
#include "builder/plan_facts.h"
#include "builder/plan_inputs.h"
#include "builder/recipe_environment.h"
#include "cache/key_inputs.h"

namespace archbuild {

// Everything a build needs, decided before it starts: a plain value that
// `archbuild plan` prints and the runner executes. Made of typed parts, each
// decided by one small pure step (make_plan); `env` is their sum, exactly
// what the build step gets.
struct BuildPlan {
  std::string package;
  std::string recipe;
  std::string ref;
  std::string build_system;  // setup.py / pyproject
  std::string python;        // the interpreter the build runs with
  std::filesystem::path source_dir;
  std::filesystem::path out_dir;  // log, wheels, trace, report
  std::filesystem::path wheel_dir;
  std::filesystem::path log_path;
  std::filesystem::path trace_path;
  std::vector<std::string> argv;           // no shell
  std::map<std::string, std::string> env;  // set on top of the caller's environment: the parts' sum
  std::string arch_list;                   // TORCH_CUDA_ARCH_LIST as the recipe's dialect spells it
  ArchDialect dialect = ArchDialect::cmake;
  double job_memory_gb = 0;
  std::string inherited_path;  // the caller's $PATH, which env["PATH"] extends (the script says "$PATH")
  // How the link compiler gets the shared libstdc++ where it would link its
  // static copy (toolchain/cxx_runtime_link.h); "" when nothing is needed.
  std::string cxx_runtime;

  // The parts.
  JobPlan jobs;
  RecipeEnvironment recipe_env;  // [build.env], [[env]] rows, [[system_library]] variables
  ArchEnforcementPlan enforcement;
  CompilerLaunchers launchers;  // step launcher, compiler launcher, shims to create
  ConfigurePlan configure;      // CMAKE_FRESH, stale setuptools outputs
  NetworkPlan network;
  CompileClusterPlan cluster;  // where compiles run: here or on an sccache-dist cluster
  KeyInputs key;               // what the cache key hashes (cache/key_inputs.h)
  // One line per build requirement: "cmake>=3.27: 3.31.2", or what happens
  // to a missing one ("ninja: missing, installed before the build step").
  std::vector<std::string> requirements;
  // What the build will take (builder/build_time_model.h): time, and the
  // disk and memory it needs.
  size_t code_images = 1;      // SASS + PTX images per nvcc call
  bool clean_build = true;     // no earlier build in the work tree (or it is removed first)
  std::string compile_inputs;  // the key's inputs but the source's commits: same value, warm compile cache
  BuildForecast forecast;
  std::optional<uint64_t> disk_bytes;  // the work tree, from the last build of this ref or the recipe's estimate
  std::string disk_basis;
  double peak_memory_gb = 0;  // compiles at once x the recipe's per-job memory

  const std::map<std::string, std::string>& key_inputs() const { return key.values(); }
  // The same build at `jobs` compiles at once, continuing it: an OOM retry.
  // It does not configure afresh.
  BuildPlan with_jobs(unsigned jobs) const;
  nlohmann::json to_json() const;
  // A script a user can paste: cd, exports, the command (shell-quoted).
  std::string shell_script() const;
};

// The build's TMPDIR (nvcc's intermediates on the build disk). archbuild's
// sccache server gets it too: sccache 0.16 splits an nvcc call in a temp
// dir of its own, and a distributed compile fails when the server's and
// the client's TMPDIR differ.
inline std::filesystem::path build_temp_dir(const std::filesystem::path& out_dir) { return out_dir / "tmp"; }

// The plan as a pure function of its inputs and the facts: no files read or
// written, no process run, no environment looked at.
BuildPlan make_plan(const PlanInputs& inputs, const PlanFacts& facts);

// From now on the work tree is configured with the plan's inputs: a rerun
// with the same ones resumes incrementally, other ones get CMAKE_FRESH=1.
inline void record_configure_inputs(const BuildPlan& plan, bool settled = true) {
  record_configure_inputs(plan.source_dir, plan.configure.inputs, settled);
}

}  // namespace archbuild
