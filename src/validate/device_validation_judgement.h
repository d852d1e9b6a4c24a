#pragma once

#include <string>
#include <vector>

#include "gpu/module_loader.h"
#include "process/run_process.h"
#include "validate/device_validation.h"
#include "validate/kernel_census.h"
#include "validate/op_exercise.h"
#include "validate/project_tests.h"

namespace archbuild {

// What device validation concludes from what its child processes reported:
// pure verdicts, kept apart from running them so each can be tested without a GPU.

// Why validation did not run, from the GPU probe's reason: a probe that found
// GPUs, none of them a target, says so itself; anything else is "no GPU (...)".
std::string device_skipped_reason(const std::string& unavailable_reason);

// A child process judged by how it ended: ok when it succeeded, else its
// status and the last lines it printed (stderr, or stdout when that is
// empty), and what kind of failure its output names.
DeviceCheck judge_process_check(DeviceCheck check, const ProcessResult& result);

// One fatbin loader process: how it ended, and that judged as a check.
struct FatbinLoaderRun {
  ProcessResult result;  // its stdout is the loader's JSON report
  DeviceCheck check;
};

// The loaders of one fatbin load check judged together: the first without a
// report fails the check with its reason; otherwise their reports merged
// (judge_module_loads).
DeviceCheck judge_fatbin_loaders(DeviceCheck check, const std::vector<FatbinLoaderRun>& loaders);

// The loaders' merged report judged: every container loaded on every GPU.
DeviceCheck judge_module_loads(DeviceCheck check, bool loaders_succeeded, const ModuleLoadReport& report);

// Whether the torch probe (exit 4) found that torch imports but cannot run a
// kernel of its own under CUDA_FORCE_PTX_JIT=1; no torch (exit 3), torch
// running fine, a signal or a timeout is false.
bool torch_probe_found_no_jit(const ProcessResult& probe);

// Why an exerciser run failed: a package that did not import (exit 2) for
// want of a module other than `packages` is this machine's fault; a mismatch
// is the kernels'. None when it passed.
FailureKind exercise_failure(const OpExercise& exercise, const std::vector<std::string>& packages);

// An exerciser run as a check named `name`.
DeviceCheck exercise_check(const std::string& name, const OpExercise& exercise,
                           const std::vector<std::string>& packages);

// Whether the native exerciser run left outputs the PTX run can be compared
// with: it ran, no package failed to import, and it exercised an op.
bool exercise_has_native_outputs(const OpExercise& native);

// The failed check of require_kernel_launch when none of the wheel's kernels
// launched: the wheel's fault when the recorder ran, else this machine's.
DeviceCheck unlaunched_kernels_check(const KernelCensus& census);

// A check that failed for a reason it cannot judge: passed, saying why.
void excuse_check(DeviceCheck& check, const std::string& why);

}  // namespace archbuild
