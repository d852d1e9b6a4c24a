#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "builder/plan_facts.h"
#include "builder/plan_inputs.h"

namespace archbuild {

// Whether the work tree's configured build can be resumed. A configured
// CMake build dir silently ignores a changed arch list (or toolkit, or host
// compiler), and setuptools reuses an extension that is newer than its
// sources: with other inputs than the tree recorded, the build configures
// afresh (CMAKE_FRESH=1) and those outputs are removed first.
struct ConfigurePlan {
  std::map<std::string, std::string> inputs;  // what, if changed, makes CMAKE_FRESH=1
  bool fresh = false;
  std::string reason;                                // why fresh: "TORCH_CUDA_ARCH_LIST changed: 8.0 -> 9.0"
  std::vector<std::filesystem::path> stale_outputs;  // removed by the executor before the build
  std::map<std::string, std::string> env;            // CMAKE_FRESH=1 when fresh
};

// `inputs` as configure_inputs() computes them.
ConfigurePlan plan_configure(const PlanInputs& in, const PlanFacts& facts, std::map<std::string, std::string> inputs);

// What a configured build depends on: some of the build's environment
// (`env`, the launcher the user chose, not the step launcher in front of
// it), the recipe's environment as the key spells it, --env, and whether
// enforcement is on.
std::map<std::string, std::string> configure_inputs(const std::map<std::string, std::string>& env,
                                                    const std::string& compiler_launcher,
                                                    const std::map<std::string, std::string>& recipe_env_text,
                                                    const std::map<std::string, std::string>& extra_env,
                                                    bool enforce_archs);

}  // namespace archbuild
