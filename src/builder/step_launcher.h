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

}  // namespace archbuild
