#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "builder/arch_enforcement_plan.h"
#include "builder/plan_facts.h"
#include "builder/plan_inputs.h"

namespace archbuild {

// A launcher toolkit the build needs (builder/launcher_shims.h): created by
// the session before the build runs, never while planning.
struct LauncherToolkit {
  std::filesystem::path dir;           // <cache>/launcher-cuda/<launcher>-<hash>
  std::string launcher;                // the compiler launcher its nvcc runs, "" for the step launcher only
  std::filesystem::path toolkit_root;  // the real toolkit it mirrors
  bool operator==(const LauncherToolkit&) const = default;
};

// What runs in front of every compile: archbuild's step launcher (progress,
// arch enforcement), then the user's compiler launcher (ccache, sccache).
struct CompilerLaunchers {
  CompilerLauncher compiler_launcher = CompilerLauncher::none;  // the user's
  // What runs after the step launcher for CUDA: the user's launcher, or one
  // the recipe's or --env's CMAKE_CUDA_COMPILER_LAUNCHER names (a configure input).
  std::string cuda_launcher;
  std::string self_executable;  // archbuild, as the step launcher
  // The start of CMake's launcher lists: `SELF _launch [--nvcc-targets=T]`.
  std::vector<std::string> step_launcher;
  std::filesystem::path step_log;  // where the step launcher notes each compile's start
  bool ccache_masquerade = false;  // <cache>/ccache-bin/ (g++ -> ccache) is first on PATH
  std::vector<LauncherToolkit> toolkits;
  std::map<std::string, std::string> env;  // over the base environment

  // A compile command as the user's build ran it: without the step launcher
  // that CMake wrote in front of it.
  std::string without_step_launcher(std::string command) const;
};

// `base_env` is the build's environment before the launchers (its PATH is extended).
CompilerLaunchers plan_compiler_launchers(const PlanInputs& inputs, const PlanFacts& facts,
                                          const ArchEnforcementPlan& enforcement,
                                          const std::map<std::string, std::string>& base_env);

}  // namespace archbuild
