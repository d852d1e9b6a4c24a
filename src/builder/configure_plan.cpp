#include "builder/configure_plan.h"

#include "builder/step_launcher.h"
#include "core/secrets.h"
#include "core/strings.h"

namespace archbuild {

std::map<std::string, std::string> configure_inputs(const std::map<std::string, std::string>& env,
                                                    const std::string& compiler_launcher,
                                                    const std::map<std::string, std::string>& recipe_env_text,
                                                    const std::map<std::string, std::string>& extra_env,
                                                    bool enforce_archs) {
  std::map<std::string, std::string> inputs;
  for (const char* key : {"TORCH_CUDA_ARCH_LIST", "CUDA_HOME", "CUDAHOSTCXX", "NVCC_APPEND_FLAGS"})
    if (auto it = env.find(key); it != env.end()) inputs[key] = it->second;
  if (!compiler_launcher.empty()) inputs["CMAKE_CUDA_COMPILER_LAUNCHER"] = compiler_launcher;
  for (const auto& [key, value] : secrets::recorded_env(recipe_env_text)) inputs[key] = value;
  // CMake keeps its first CUDA compiler in its cache: the shim (enforcement
  // through the device link) is a configure input, whatever archbuild's path.
  if (auto it = env.find(kRealNvccVariable); it != env.end()) inputs["CUDACXX"] = "archbuild's nvcc over " + it->second;
  // Kept in the source's .git: secrets as their digests (core/secrets.h).
  for (const auto& [key, value] : secrets::recorded_env(extra_env)) inputs[key] = value;
  // Enforcement happens in the launcher, not in the project's flags: turning
  // it on or off must still rebuild what was built the other way.
  inputs["archbuild.arch_enforcement"] = enforce_archs ? "on" : "off";
  return inputs;
}

ConfigurePlan plan_configure(const PlanInputs& in, const PlanFacts& facts, std::map<std::string, std::string> inputs) {
  ConfigurePlan plan;
  plan.inputs = std::move(inputs);
  const auto& recorded = facts.recorded_configure_inputs;
  if (recorded && recorded->count(kConfigurePendingKey)) {
    plan.reason = "the last build in this tree was stopped before it compiled: its configure may not have run";
  } else if (recorded && *recorded != plan.inputs) {
    std::map<std::string, std::string> keys = *recorded;
    keys.insert(plan.inputs.begin(), plan.inputs.end());
    std::vector<std::string> changes;
    for (const auto& [key, unused] : keys) {
      auto before = recorded->find(key);
      auto after = plan.inputs.find(key);
      std::string was = before == recorded->end() ? "(unset)" : before->second;
      std::string now = after == plan.inputs.end() ? "(unset)" : after->second;
      if (was != now) changes.push_back(key + " changed: " + was + " -> " + now);
    }
    plan.reason = join(changes, "; ");
  } else if (!recorded && facts.has_cmake_build_dir) {
    plan.reason = "a CMake build dir exists whose inputs archbuild did not record";
  } else if (!recorded && !facts.setuptools_outputs.empty()) {
    plan.reason = "setuptools outputs exist whose inputs archbuild did not record";
  }
  plan.fresh = !plan.reason.empty();
  if (plan.fresh) {
    plan.env["CMAKE_FRESH"] = "1";
    plan.stale_outputs = facts.setuptools_outputs;
    // Builds that read no CMAKE_FRESH: their build dir goes instead.
    for (const auto& path : in.resolved.build->fresh_configure_removes)
      plan.stale_outputs.push_back(in.source_dir / path);
  }
  return plan;
}

}  // namespace archbuild
