#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace archbuild {

struct JobInputs {
  unsigned cores = 1;
  uint64_t available_memory_bytes = 0;
  double job_memory_gb = 2.0;             // the recipe's per-job estimate
  std::optional<unsigned> jobs_override;  // --jobs
  size_t compile_units = 0;               // .cu files in the source (0: unknown)
  size_t arch_count = 1;                  // SASS/PTX targets per .cu file
  bool one_file_at_a_time = false;        // setup.py compiles serially (cpp_extension use_ninja=False)
  bool parallel_setuptools = false;       // ... unless archbuild's frontend runs its compiles in parallel
  // A compile cluster's cores (sccache-dist): compiles run there, and what
  // stays here per job is the nvcc driver and the preprocessor.
  unsigned cluster_cpus = 0;
};

// Memory a compile takes here when its passes run on a compile cluster:
// nvcc --dryrun and the preprocessor of a torch-sized translation unit
// (docs/MATRIX.md "How many jobs").
inline constexpr double kDistributedJobLocalMemoryGb = 0.5;

struct JobPlan {
  unsigned jobs = 1;              // MAX_JOBS
  unsigned nvcc_threads = 1;      // nvcc --threads (archs compiled in parallel per file)
  unsigned compiles_at_once = 1;  // what the build really runs at once: jobs, or 1 for a serial setup.py
  std::string reason;             // why, in one line
  // What the build really gets, when that is not simply `jobs` at once:
  // "1 compile at a time (...)"; empty otherwise.
  std::string parallelism;
};

// jobs = min(cores, memory / per-job estimate), at least 1; --jobs wins.
// With a compile cluster: min(cores + the cluster's cores, memory / the
// local part of a job).
// When the project has fewer CUDA files than jobs and several archs, the idle
// cores go to nvcc --threads, so a small multi-arch build takes the time of a
// single-arch one (docs/CUDA_FACTS.md#measured-threads: 141 s -> 57 s for 6 archs). A build
// that compiles one file at a time leaves all cores but one idle, unless
// archbuild's PEP 517 frontend runs its setuptools compiles in parallel.
JobPlan plan_jobs(const JobInputs& inputs);

}  // namespace archbuild
