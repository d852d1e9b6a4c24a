#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpu/gpu_probe.h"
#include "validate/kernel_census.h"
#include "validate/op_exercise.h"
#include "validate/project_tests.h"
#include "validate/test_dependencies.h"
#include "validate/wheel_dependencies.h"

namespace archbuild {

struct DeviceValidationRequest {
  std::filesystem::path wheel;
  std::string python;                           // its site-packages lend the dependencies (offline machines)
  std::filesystem::path kernel_test;            // the recipe's script; empty: none
  std::vector<std::string> packages;            // top-level names holding its native code, passed to the script
  std::vector<std::string> extension_packages;  // subpackages holding its native libraries, and pure-Python
                                                // top-level packages (the exerciser imports them best effort)
  bool ptx_requested = false;                   // some target asked for +PTX: run again with the JIT forced
  GpuReport gpus;                               // the GPUs to prove it on
  std::string visible_devices;                  // CUDA_VISIBLE_DEVICES for the checks when only some GPUs are targets
  std::filesystem::path work_dir;               // venv, logs (check_validation_work_dir)
  // The project's own suite (recipe [tests] or --test), run from its tree.
  std::optional<ProjectTests> tests;
  std::string tests_origin;          // "recipe NAME", "--test"
  std::filesystem::path source_dir;  // where the tests run; empty: no tests
  bool exercise_ops = true;          // run the generic op exerciser (torch.library ops, CPU vs GPU)
  double exercise_budget_seconds = 120;
  bool require_kernel_launch = false;      // a CUDA wheel none of whose kernels launched fails
  TestDependencySource test_dependencies;  // where the project's tests' dependencies may come from
};

struct DeviceCheck {
  std::string name;  // "fatbins load natively", "kernel test (native SASS)", ...
  bool ok = false;
  std::string detail;  // one line: what passed, or what failed and where
  std::filesystem::path log;
  double seconds = 0;
  FailureKind failure = FailureKind::none;  // when !ok: the wheel's fault, or this machine's
};

struct DeviceValidation {
  bool ran = false;
  std::string skipped_reason;        // why not, when !ran
  std::vector<GpuDevice> gpus;       // where the checks ran (the driver's ordinals)
  std::string visible_devices;       // CUDA_VISIBLE_DEVICES the checks got ("" when all GPUs)
  std::string user_visible_devices;  // the user's own CUDA_VISIBLE_DEVICES, when set
  std::vector<DeviceCheck> checks;
  std::optional<WheelDependencies> wheel_dependencies;  // what the wheel declares and the venv lacked
  std::optional<ProjectTestResult> project_tests;
  std::optional<KernelCensus> census;      // which of the wheel's kernels launched
  std::optional<OpExercise> exercise;      // the op exerciser, native SASS, CPU as reference
  std::optional<OpExercise> exercise_ptx;  // again under CUDA_FORCE_PTX_JIT=1, native results as reference
  bool ok() const;                         // ran and every check passed
  // Ran, and at least one of the wheel's own kernels launched (or the wheel
  // has none): what `launched` means; a CUDA wheel without it is only `loaded`.
  bool kernels_launched() const;
  // And their results were compared with a reference: the recipe's kernel
  // test passed natively, or the exerciser compared an op with the CPU.
  bool results_compared() const;
  // Failed, and every failed check failed because of this machine (a
  // missing test dependency, a broken interpreter): the wheel is not known bad.
  bool failed_by_environment() const;
  nlohmann::json to_json() const;
};

// The file validation writes first into a work dir it makes its own.
inline constexpr const char* kValidationWorkMarker = ".archbuild-validate";
// The clean room's own subdirectory of a validation work dir (validate/clean_room.h).
inline constexpr const char* kCleanRoomDir = "clean-room";

// A work dir is validation's when it is absent or empty, or carries the
// marker. Anything else (even only names validation writes), or a symbolic
// link, is refused with exit 2 naming it. Writes nothing.
void check_validation_work_dir(const std::filesystem::path& work_dir);
// check_validation_work_dir, then creates it and writes the marker: whichever
// step writes there first (the clean room, the device checks) claims it.
void claim_validation_work_dir(const std::filesystem::path& work_dir);

// Proves the wheel runs on every visible GPU, each step in a child process:
// 1. every executable fatbin of every CUDA library loads through the driver
//    API with CUDA_DISABLE_PTX_JIT=1 (native SASS, no JIT fallback), and with
//    CUDA_FORCE_PTX_JIT=1 when +PTX was asked (spread over one loader process
//    per core: the JIT is the cost);
// 2. a fresh venv (`python -m venv`, with the interpreter's own
//    site-packages behind it) gets the wheel with pip --no-deps --no-index;
// 3. the recipe's kernel test runs there with CUDA_DISABLE_PTX_JIT=1 and
//    CUDA_LAUNCH_BLOCKING=1 (a failure points at its kernel), and again with
//    CUDA_FORCE_PTX_JIT=1 when +PTX was asked;
// 4. the op exerciser: the torch.library ops the packages register, on
//    the CPU and on each GPU, compared (validate/op_exercise.h); with +PTX
//    again under CUDA_FORCE_PTX_JIT=1, compared with the native results;
// 5. the project's own tests, when named or found, run from its source tree
//    against the installed wheel, natively (validate/project_tests.h).
// Everything under CUDA_FORCE_PTX_JIT=1 shares one JIT cache in the work dir
// (emptied first), so no PTX is compiled twice in one validation.
// Steps 3-5 run with archbuild's launch recorder loaded, and the census
// says which of the wheel's own kernels launched (validate/kernel_census.h).
// The work dir is made validation's (check_validation_work_dir, then the
// marker); of a previous run's files only its venv and logs are removed.
// Without a GPU nothing runs and `skipped_reason` says so (`gpus.unavailable_reason`).
DeviceValidation validate_on_device(const DeviceValidationRequest& request);

}  // namespace archbuild
