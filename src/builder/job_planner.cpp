#include "builder/job_planner.h"

#include <algorithm>
#include <cstdio>

#include "core/system_info.h"

namespace archbuild {

JobPlan plan_jobs(const JobInputs& in) {
  JobPlan plan;
  unsigned cores = std::max(1u, in.cores);
  uint64_t per_job = static_cast<uint64_t>(in.job_memory_gb * (1ull << 30));
  unsigned by_memory = per_job ? static_cast<unsigned>(std::max<uint64_t>(1, in.available_memory_bytes / per_job))
                               : cores;
  if (in.jobs_override) {
    plan.jobs = std::max(1u, *in.jobs_override);
    plan.reason = "--jobs " + std::to_string(plan.jobs);
  } else if (in.cluster_cpus > 0) {
    const auto local_part = static_cast<uint64_t>(kDistributedJobLocalMemoryGb * (1ull << 30));
    const unsigned by_local_memory = static_cast<unsigned>(
        std::max<uint64_t>(1, in.available_memory_bytes / local_part));
    plan.jobs = std::max(1u, std::min(cores + in.cluster_cpus, by_local_memory));
    char local_text[32];
    std::snprintf(local_text, sizeof local_text, "%.1f", kDistributedJobLocalMemoryGb);
    plan.reason = std::to_string(plan.jobs) + " jobs = min(" + std::to_string(cores) + " cores here + " +
                  std::to_string(in.cluster_cpus) + " on the compile cluster, " +
                  format_bytes(in.available_memory_bytes) + " available / " + local_text +
                  " GB per job for what stays here (nvcc's driver, the preprocessor) = " +
                  std::to_string(by_local_memory) + ")";
  } else {
    plan.jobs = std::max(1u, std::min(cores, by_memory));
    char per_job_text[32];
    std::snprintf(per_job_text, sizeof per_job_text, "%.1f", in.job_memory_gb);
    plan.reason = std::to_string(plan.jobs) + " jobs = min(" + std::to_string(cores) + " cores, " +
                  format_bytes(in.available_memory_bytes) + " available / " + per_job_text +
                  " GB per job = " + std::to_string(by_memory) + ")";
  }
  // How many nvcc processes run at once, at most.
  const bool serial = in.one_file_at_a_time && !in.parallel_setuptools;
  plan.compiles_at_once = serial ? 1 : plan.jobs;
  if (serial)
    plan.parallelism =
        "1 compile at a time: setup.py turns torch's ninja off (use_ninja=False) and its build command does not go "
        "through archbuild's PEP 517 frontend, which would compile in parallel";
  else if (in.one_file_at_a_time && plan.jobs > 1)
    plan.parallelism = "up to " + std::to_string(plan.jobs) +
                       " compiles at once: setup.py turns torch's ninja off, archbuild's frontend runs its extension "
                       "modules and their files in parallel";
  const size_t concurrent = serial ? std::min<size_t>(in.compile_units, 1) : in.compile_units;
  if (in.arch_count > 1 && concurrent > 0 && concurrent < plan.jobs) {
    // Each .cu file can use jobs/units threads; more than one per arch is waste.
    unsigned spare = plan.jobs / static_cast<unsigned>(concurrent);
    plan.nvcc_threads = std::max(1u, std::min<unsigned>(spare, static_cast<unsigned>(in.arch_count)));
    if (plan.nvcc_threads > 1)
      plan.reason += "; " +
                     (serial
                          ? std::string("the build compiles one file at a time")
                          : std::to_string(in.compile_units) + " CUDA files < " + std::to_string(plan.jobs) + " jobs") +
                     ": nvcc --threads " + std::to_string(plan.nvcc_threads);
  }
  return plan;
}

}  // namespace archbuild
