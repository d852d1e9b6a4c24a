#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "builder/plan_facts.h"
#include "builder/plan_inputs.h"

namespace archbuild {

// How every nvcc call of the build is made to build exactly the asked
// targets (builder/arch_enforcement.h reads back what the calls did).
struct ArchEnforcementPlan {
  bool on = true;
  std::string nvcc_targets;        // the asked targets, comma-separated (CMake splits launcher lists at ';')
  std::filesystem::path nvcc_log;  // what the calls did, one JSON line each
  // CMake runs its device-link step without the compiler launcher: its CUDA
  // compiler is then a launcher toolkit's nvcc over this real one.
  std::optional<std::filesystem::path> real_nvcc;
  std::optional<std::filesystem::path> cmake_cuda_compiler;  // that launcher toolkit's bin/nvcc
  std::map<std::string, std::string> env;
};

ArchEnforcementPlan plan_arch_enforcement(const PlanInputs& inputs, const PlanFacts& facts);

}  // namespace archbuild
