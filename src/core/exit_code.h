#pragma once

namespace archbuild {

// The process exit codes, documented in README.md ("Exit codes").
enum class ExitCode : int {
  success = 0,
  work_failed = 1,    // a build, a validation, or a diagnosis found a problem
  bad_input = 2,      // malformed argument, arch string, recipe, file
  environment = 3,    // this machine cannot do it (no GPU, toolkit too old, ...)
  interrupted = 130,  // SIGINT / SIGTERM
};

inline int to_int(ExitCode code) { return static_cast<int>(code); }

}  // namespace archbuild
