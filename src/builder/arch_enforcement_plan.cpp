#include "builder/arch_enforcement_plan.h"

#include "arch/nvcc_arch_flags.h"
#include "builder/arch_enforcement.h"
#include "builder/launcher_shims.h"
#include "builder/step_launcher.h"

namespace archbuild {

ArchEnforcementPlan plan_arch_enforcement(const PlanInputs& in, const PlanFacts& facts) {
  ArchEnforcementPlan plan;
  plan.on = in.enforce_archs;
  plan.nvcc_log = in.out_dir / "nvcc.log";
  plan.nvcc_targets = format_nvcc_targets(nvcc_targets(in.archs), ",");
  if (!plan.on) return plan;
  plan.env[kNvccTargetsVariable] = plan.nvcc_targets;
  plan.env[kNvccLogVariable] = plan.nvcc_log.string();
  plan.env["CUDAARCHS"] = cmake_cuda_architectures(in.archs);  // CMake's default CMAKE_CUDA_ARCHITECTURES
  // The device link passes the launcher toolkit's nvcc, which lets a call
  // already launched pass (kStepLaunchedVariable).
  if (in.toolchain->installed) {
    plan.real_nvcc = in.toolchain->installed->nvcc;
    plan.cmake_cuda_compiler =
        launcher_toolkit_dir(in.cache_dir, "", in.toolchain->installed->root, facts.self_executable) / "bin" / "nvcc";
    plan.env["CUDACXX"] = plan.env["CMAKE_CUDA_COMPILER"] = plan.cmake_cuda_compiler->string();
    plan.env[kRealNvccVariable] = plan.real_nvcc->string();
  }
  return plan;
}

}  // namespace archbuild
