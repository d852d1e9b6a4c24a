#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "arch/arch_target.h"
#include "config/compiler_launcher.h"
#include "process/network_isolation.h"
#include "recipe/recipe.h"
#include "source/source_tree.h"
#include "toolchain/host_compiler.h"
#include "toolchain/toolchain.h"

namespace archbuild {

// The request and the recipe's decisions, resolved: what a plan is made of
// besides the facts of this machine (PlanFacts).
struct PlanInputs {
  const Recipe* recipe = nullptr;
  ResolvedRecipe resolved;
  std::string package;
  std::string source_identity;  // SourceTarget::identity(): build history is kept per source
  ArchList archs;
  const Toolchain* toolchain = nullptr;
  std::optional<HostCompiler> host;
  std::filesystem::path source_dir;
  std::filesystem::path out_dir;
  std::filesystem::path cache_dir;
  std::string python;                     // absolute path of the interpreter the build runs with
  std::optional<unsigned> jobs_override;  // --jobs / the jobs setting
  CompilerLauncher compiler_launcher = CompilerLauncher::none;
  std::string compiler_cache_remote;                       // ccache remote storage URL, or ""
  std::string compile_cluster;                             // sccache-dist scheduler URL, or ""
  std::optional<SourceTree> source;                        // absent when planning before checkout
  std::map<std::string, std::string> dependencies;         // "torch" -> what it builds against
  std::map<std::string, std::string> build_requirements;   // "cmake" -> "3.31.2", installed for the build
  std::map<std::string, std::string> dependency_versions;  // "torch" -> "2.9.1+cu130.sm90" ({version:torch})
  bool enforce_archs = true;                               // false: keep the project's own arch flags
  std::map<std::string, std::string> extra_env;            // --env KEY=VALUE, over the recipe's [build.env]
  NetworkIsolationProbe network;                           // what this machine allows
  bool allow_network = false;                              // --allow-network
  std::string portable;  // --portable: the repair's pinned tools, a key input; "": not repaired
};

// Whether the build step runs archbuild's PEP 517 frontend with its parallel
// setuptools compiles on (recipes/frontends/parallel_build_ext.py).
bool runs_parallel_frontend(const BuildStep& build, const std::map<std::string, std::string>& extra_env = {});

}  // namespace archbuild
