#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "arch/arch_dialect.h"
#include "builder/build_time_model.h"
#include "builder/job_planner.h"
#include "builder/plan_facts.h"
#include "process/network_isolation.h"
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
  std::string build_system;  // setup.py / pyproject
  std::string python;        // the interpreter the build runs with
  std::filesystem::path source_dir;
  std::filesystem::path out_dir;  // log, wheels, trace, report
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
  std::filesystem::path step_log;                 // where the step launcher notes each compile's start
  bool enforce_archs = true;                      // nvcc calls are rewritten to the asked targets
  std::filesystem::path nvcc_log;                 // what they did, one JSON line per nvcc call
  std::string self_executable;                    // archbuild: the step launcher the launcher shims run
  std::map<std::string, std::string> key_inputs;  // what the cache key hashes
  std::string inherited_path;  // the caller's $PATH, which env["PATH"] extends (the script says "$PATH")
  // The build step runs offline: in a network namespace of its own when
  // `isolate_network` is not unavailable; `network` says how, for humans.
  NetworkIsolation isolate_network = NetworkIsolation::unavailable;
  std::string network;
  // One line per [[system_library]]: where it was found, or what the build
  // does without it ("NCCL: /usr/local/cuda/include, /usr/local/cuda/lib64").
  std::vector<std::string> libraries;
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

  nlohmann::json to_json() const;
  // A script a user can paste: cd, exports, the command (shell-quoted).
  std::string shell_script() const;
};

// The request and the recipe's decisions, resolved: what a plan is made of
// besides the facts of this machine (PlanFacts).
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
  std::string python;                                        // absolute path of the interpreter the build runs with
  std::optional<unsigned> jobs_override;                     // --jobs / the jobs setting
  std::string compiler_launcher;                             // "ccache", "sccache" or "" (none)
  std::string compiler_cache_remote;                         // ccache remote storage URL, or ""
  std::optional<SourceTree> source;                          // absent when planning before checkout
  std::map<std::string, std::string> dependency_key_inputs;  // "dep.torch" -> what it builds against
  std::map<std::string, std::string> dependency_versions;    // "torch" -> "2.9.1+cu130.sm90" ({version:torch})
  bool enforce_archs = true;                                 // false: keep the project's own arch flags
  std::map<std::string, std::string> extra_env;              // --env KEY=VALUE, over the recipe's [build.env]
  NetworkIsolationProbe network;                             // what this machine allows
  bool allow_network = false;                                // --allow-network
};

// Whether the build step runs archbuild's PEP 517 frontend with its parallel
// setuptools compiles on (recipes/frontends/parallel_build_ext.py).
bool runs_parallel_frontend(const BuildStep& build, const std::map<std::string, std::string>& extra_env = {});

// --env KEY=VALUE items as a map. Throws UserError(bad_input) for a
// malformed item or a variable archbuild sets itself (naming the option
// that controls it).
std::map<std::string, std::string> parse_env_assignments(const std::vector<std::string>& items);

// The plan as a pure function of its inputs and the facts: no files read or
// written, no process run, no environment looked at.
BuildPlan make_plan(const PlanInputs& inputs, const PlanFacts& facts);

// From now on the work tree is configured with the plan's inputs: a rerun
// with the same ones resumes incrementally, other ones get CMAKE_FRESH=1.
inline void record_configure_inputs(const BuildPlan& plan) {
  record_configure_inputs(plan.source_dir, plan.configure_inputs);
}

}  // namespace archbuild
