#pragma once

#include <string>

namespace archbuild {

// `archbuild _launch COMMAND...`: the compiler launcher archbuild puts in
// front of a CMake build's compiles (before ccache). It appends
// "<epoch ms>\t<pid>\t<output file>\n" to $ARCHBUILD_STEP_LOG, then execs COMMAND,
// so the status line can name the longest-running compile: ninja reports
// steps only when they finish. When the command runs nvcc and the build
// enforces its arch list ($ARCHBUILD_NVCC_TARGETS), nvcc's target flags are
// rewritten first (builder/arch_enforcement.h). Never returns on success.
int run_step_launcher(int argc, char** argv);

constexpr const char* kStepLauncherCommand = "_launch";
// Set for the command a step launcher runs: a launcher started under another
// (CMake's launcher runs the compiler, which is itself a launcher toolkit's
// nvcc) runs its command as it is, so each call is logged and rewritten once.
constexpr const char* kStepLaunchedVariable = "ARCHBUILD_STEP_LAUNCHED";
// The toolkit's own nvcc, when CUDACXX names a launcher toolkit's.
constexpr const char* kRealNvccVariable = "ARCHBUILD_REAL_NVCC";

}  // namespace archbuild
