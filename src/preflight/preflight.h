#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "arch/arch_target.h"
#include "core/check_verdict.h"
#include "gpu/gpu_probe.h"
#include "toolchain/cxx_runtime_link.h"
#include "toolchain/host_compiler.h"
#include "toolchain/toolchain.h"

namespace archbuild {

struct PreflightCheck {
  std::string name;  // "compile sm_90", "host compiler", "driver", ...
  CheckVerdict verdict = CheckVerdict::ok;
  std::string detail;  // one line a user can act on
};

struct PreflightInputs {
  const Toolchain* toolchain = nullptr;
  const ArchList* archs = nullptr;
  const GpuReport* gpus = nullptr;
  std::filesystem::path build_dir;
  std::filesystem::path temp_dir;
  uint64_t min_build_disk_bytes = 0;
  uint64_t min_temp_disk_bytes = 0;
  uint64_t job_memory_bytes = 0;  // one compile job's estimate
};

// Runs every check; none throws for a failed check (it becomes a `fail` verdict).
std::vector<PreflightCheck> run_preflight(const PreflightInputs& inputs);

// Pieces exposed for tests.
PreflightCheck check_driver(const Toolchain& toolchain, const GpuReport& gpus);
PreflightCheck check_compile(const Toolchain& toolchain, const HostCompiler& host, const ArchTarget& target,
                             const std::filesystem::path& scratch);
// How $CXX (else the host compiler) links libstdc++: ok when shared, warn
// when a build will link the shared one for it, fail when it cannot.
PreflightCheck check_cxx_runtime(const std::string& host_compiler, const std::filesystem::path& scratch);
// The first line of compiler output that says what went wrong.
std::string first_error_line(const std::string& output);
// "580.65.06" < "580.159.04", compared numerically part by part.
int compare_driver_versions(const std::string& a, const std::string& b);

}  // namespace archbuild
