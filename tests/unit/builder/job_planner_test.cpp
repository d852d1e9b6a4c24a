#include "builder/job_planner.h"

#include <string>

#include <gtest/gtest.h>

using namespace archbuild;

TEST(Jobs, MemoryCoresOverrideAndThreads) {
  JobInputs in;
  in.cores = 16;
  in.available_memory_bytes = 32ull << 30;
  in.job_memory_gb = 4.5;
  EXPECT_EQ(plan_jobs(in).jobs, 7u);  // memory-bound: 32 / 4.5
  in.available_memory_bytes = 256ull << 30;
  EXPECT_EQ(plan_jobs(in).jobs, 16u);  // core-bound
  in.available_memory_bytes = 1ull << 30;
  EXPECT_EQ(plan_jobs(in).jobs, 1u);  // never 0
  in.jobs_override = 3;
  EXPECT_EQ(plan_jobs(in).jobs, 3u);
  in.jobs_override.reset();
  in.available_memory_bytes = 256ull << 30;
  in.compile_units = 2;  // extension-cpp: one .cu (+ a .cpp)
  in.arch_count = 6;
  auto plan = plan_jobs(in);
  EXPECT_EQ(plan.nvcc_threads, 6u);  // 16 jobs / 2 units = 8 spare, capped by 6 archs
  in.arch_count = 1;
  EXPECT_EQ(plan_jobs(in).nvcc_threads, 1u);
  in.arch_count = 6;
  in.compile_units = 500;  // PyTorch: plenty of files, no threads
  EXPECT_EQ(plan_jobs(in).nvcc_threads, 1u);
  in.compile_units = 3;  // pytorch_scatter: 3 .cu files, but compiled one at a time
  in.arch_count = 7;
  EXPECT_EQ(plan_jobs(in).nvcc_threads, 5u);  // 16 / 3 if they ran at once
  in.one_file_at_a_time = true;
  plan = plan_jobs(in);
  EXPECT_EQ(plan.nvcc_threads, 7u);
  EXPECT_NE(plan.reason.find("one file at a time"), std::string::npos) << plan.reason;
}

TEST(Jobs, SaysWhatParallelismASerialSetuptoolsBuildReallyGets) {
  JobInputs in;
  in.cores = 16;
  in.available_memory_bytes = 128ull << 30;
  in.compile_units = 14;
  in.arch_count = 1;
  EXPECT_EQ(plan_jobs(in).parallelism, "");  // ninja: the jobs are what it gets
  in.one_file_at_a_time = true;
  auto serial = plan_jobs(in);
  EXPECT_EQ(serial.parallelism.rfind("1 compile at a time", 0), 0u) << serial.parallelism;
  in.parallel_setuptools = true;  // archbuild's frontend runs them in parallel
  in.arch_count = 4;
  auto parallel = plan_jobs(in);
  EXPECT_EQ(parallel.parallelism.rfind("up to 16 compiles at once", 0), 0u) << parallel.parallelism;
  EXPECT_EQ(parallel.nvcc_threads, 1u);  // 14 files at once leave no idle cores for --threads
}

TEST(Jobs, ACompileClusterAddsItsCoresAndTheLocalPartBoundsThem) {
  JobInputs in;
  in.cores = 4;
  in.available_memory_bytes = 64ull << 30;
  in.job_memory_gb = 4.5;
  EXPECT_EQ(plan_jobs(in).jobs, 4u);
  in.cluster_cpus = 44;
  auto plan = plan_jobs(in);
  EXPECT_EQ(plan.jobs, 48u);  // 4 here + 44 there; 64 GiB / 0.5 GB = 128 would allow more
  EXPECT_NE(plan.reason.find("4 cores here + 44 on the compile cluster"), std::string::npos) << plan.reason;
  in.available_memory_bytes = 8ull << 30;
  EXPECT_EQ(plan_jobs(in).jobs, 16u);  // what stays here per job bounds it: 8 GiB / 0.5 GB
  in.jobs_override = 6;
  EXPECT_EQ(plan_jobs(in).jobs, 6u);  // --jobs wins
}
