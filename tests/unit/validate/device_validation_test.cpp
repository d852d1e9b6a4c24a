#include "validate/device_validation.h"

#include <gtest/gtest.h>

#include "test_support.h"

using namespace archbuild;

namespace {

DeviceValidation ran_with(std::vector<DeviceCheck> checks, size_t launched, size_t wheel_kernels = 4) {
  DeviceValidation validation;
  validation.ran = true;
  validation.checks = std::move(checks);
  KernelCensus census;
  census.recorded = true;
  census.wheel_kernels = wheel_kernels;
  for (size_t i = 0; i < launched; ++i) census.launched.push_back("_Z1kv" + std::to_string(i));
  validation.census = census;
  return validation;
}

DeviceCheck passed(const std::string& name) { return {name, true, "", {}, 0}; }

}  // namespace

TEST(DeviceValidation, LaunchedNeedsOneOfTheWheelsOwnKernels) {
  EXPECT_TRUE(ran_with({passed("fatbins load natively")}, 1).kernels_launched());
  EXPECT_FALSE(ran_with({passed("fatbins load natively")}, 0).kernels_launched());
  EXPECT_TRUE(ran_with({passed("fatbins load natively")}, 0, 0).kernels_launched());  // no kernels to launch
  auto unreadable = ran_with({passed("fatbins load natively")}, 0, 0);
  unreadable.census->unreadable = true;  // kernels that could not be read prove nothing
  EXPECT_FALSE(unreadable.kernels_launched());
  EXPECT_FALSE(DeviceValidation{}.kernels_launched());
}

TEST(DeviceValidation, CheckedNeedsAComparisonThatPassed) {
  // a kernel test that passed natively compares with its reference
  EXPECT_TRUE(ran_with({passed("kernel test (CUDA_DISABLE_PTX_JIT=1, CUDA_LAUNCH_BLOCKING=1)")}, 1).results_compared());
  // only the PTX run of it is no native comparison
  EXPECT_FALSE(ran_with({passed("kernel test (CUDA_FORCE_PTX_JIT=1)")}, 1).results_compared());
  // the exerciser compared an op with the CPU
  auto exercised = ran_with({passed("op exerciser")}, 1);
  OpExercise exercise;
  exercise.ran = true;
  exercise.exercised = exercise.compared = 1;
  exercised.exercise = exercise;
  EXPECT_TRUE(exercised.results_compared());
  exercised.exercise->compared = 0;  // cuda-only ops agree with themselves only
  EXPECT_FALSE(exercised.results_compared());
  // nothing launched: nothing of the wheel's was compared
  EXPECT_FALSE(
      ran_with({passed("kernel test (CUDA_DISABLE_PTX_JIT=1, CUDA_LAUNCH_BLOCKING=1)")}, 0).results_compared());
}

TEST(DeviceValidation, FailedByTheEnvironmentOnlyWhenEveryFailureIsThisMachines) {
  DeviceCheck missing_module{"project tests", false, "No module named 'scipy'", {}, 0, FailureKind::environment};
  DeviceCheck kernel{"kernel test", false, "no kernel image", {}, 0, FailureKind::kernel};
  auto machine = ran_with({passed("fatbins load natively"), missing_module}, 1);
  EXPECT_FALSE(machine.ok());
  EXPECT_TRUE(machine.failed_by_environment());
  auto wheel = ran_with({missing_module, kernel}, 1);
  EXPECT_FALSE(wheel.failed_by_environment());
  EXPECT_FALSE(ran_with({passed("fatbins load natively")}, 1).failed_by_environment());  // nothing failed
  EXPECT_FALSE(DeviceValidation{}.ok());                                                 // nothing ran: nothing proven
}

TEST(DeviceValidation, ItsJsonSaysWhatRanAndTheLevelsFacts) {
  auto validation = ran_with({passed("kernel test (CUDA_DISABLE_PTX_JIT=1, CUDA_LAUNCH_BLOCKING=1)")}, 2);
  validation.checks[0].seconds = 1.5;
  const auto json = validation.to_json();
  EXPECT_TRUE(json["ran"]);
  EXPECT_TRUE(json["ok"]);
  EXPECT_TRUE(json["kernels_launched"]);
  EXPECT_EQ(json["checks"][0]["seconds"], 1.5);  // each check's time
  EXPECT_EQ(json["kernel_census"]["launched_count"], 2u);
}

TEST(DeviceValidation, WithoutAGpuNothingRunsAndTheReasonIsKept) {
  TempDir dir("archbuild-devval");
  DeviceValidationRequest request;
  request.work_dir = dir.path / "work";
  request.gpus.unavailable_reason = "nvidia-smi: not found";
  auto validation = validate_on_device(request);
  EXPECT_FALSE(validation.ran);
  EXPECT_EQ(validation.skipped_reason, "no GPU (nvidia-smi: not found)");
  EXPECT_FALSE(std::filesystem::exists(request.work_dir));  // nothing written
  request.gpus.unavailable_reason = "no visible GPU is a target of 8.0: 0: H200 (9.0)";
  EXPECT_EQ(validate_on_device(request).skipped_reason, request.gpus.unavailable_reason);
}

TEST(DeviceValidation, AWorkDirHoldingSomethingElseIsRefused) {
  TempDir dir("archbuild-devval");
  EXPECT_EQ(code_of([&] { check_validation_work_dir(dir.path / "absent"); }), ExitCode::success);
  write(dir.path / "mine" / "thesis.tex", "mine");
  EXPECT_EQ(code_of([&] { check_validation_work_dir(dir.path / "mine"); }), ExitCode::bad_input);
  // even only names validation writes, without its marker: someone else's
  write(dir.path / "unmarked" / "pip-install.log", "$ pip install ...");
  EXPECT_EQ(code_of([&] { check_validation_work_dir(dir.path / "unmarked"); }), ExitCode::bad_input);
  // with the marker validation writes first, its own
  write(dir.path / "earlier" / kValidationWorkMarker, "");
  write(dir.path / "earlier" / "pip-install.log", "$ pip install ...");
  EXPECT_EQ(code_of([&] { check_validation_work_dir(dir.path / "earlier"); }), ExitCode::success);
}
