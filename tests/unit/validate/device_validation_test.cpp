#include "validate/device_validation.h"

#include <gtest/gtest.h>

#include "test_support.h"
#include "validate/device_validation_judgement.h"

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

ProcessResult exited(int code, std::string out = "", std::string err = "") {
  ProcessResult result;
  result.status = ExitStatus::exited(code);
  result.out = std::move(out);
  result.err = std::move(err);
  return result;
}

// A loader's JSON report of `loads` ("status" per container) on one GPU.
std::string loader_report(std::initializer_list<std::string> statuses, size_t first_offset = 0) {
  auto loads = nlohmann::json::array();
  size_t offset = first_offset;
  for (const auto& status : statuses)
    loads.push_back({{"file", "pkg.whl!pkg/_C.so"}, {"offset", offset++}, {"device", 0}, {"status", status}});
  return nlohmann::json{{"devices", nlohmann::json::array({"0: NVIDIA H200 (9.0)"})}, {"loads", loads}}.dump();
}

DeviceCheck fresh_load_check() { return {"fatbins load natively (CUDA_DISABLE_PTX_JIT=1)", true, "", {}, 0}; }

OpExercise exercise_ended(int exit_code, std::string summary, size_t exercised = 3) {
  OpExercise exercise;
  exercise.ran = true;
  exercise.exit_code = exit_code;
  exercise.summary = std::move(summary);
  exercise.exercised = exercised;
  return exercise;
}

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

TEST(DeviceValidationJudgement, ANoTargetReasonIsKeptAndAnyOtherSaysNoGpu) {
  EXPECT_EQ(device_skipped_reason("nvidia-smi: not found"), "no GPU (nvidia-smi: not found)");
  EXPECT_EQ(device_skipped_reason("no visible GPU is a target of 8.0: 0: H200 (9.0)"),
            "no visible GPU is a target of 8.0: 0: H200 (9.0)");
  // only as its start: a reason quoting those words elsewhere is still no GPU
  EXPECT_EQ(device_skipped_reason("driver: no visible GPU is a target"), "no GPU (driver: no visible GPU is a target)");
}

TEST(DeviceValidationJudgement, AFailedProcessSaysHowItEndedItsLastLinesAndWhy) {
  DeviceCheck named{"kernel test", false, "", {}, 2.5};
  const auto ok = judge_process_check(named, exited(0, "all good\n"));
  EXPECT_TRUE(ok.ok);
  EXPECT_EQ(ok.detail, "");  // the caller says what passed
  EXPECT_EQ(ok.seconds, 2.5);
  EXPECT_EQ(ok.failure, FailureKind::none);

  const auto kernel = judge_process_check(named,
                                          exited(1, "ignored\n",
                                                 "a\nb\nc\nRuntimeError: CUDA error: no kernel image is available\n"));
  EXPECT_FALSE(kernel.ok);
  EXPECT_EQ(kernel.detail, "exit 1: b | c | RuntimeError: CUDA error: no kernel image is available");
  EXPECT_EQ(kernel.failure, FailureKind::kernel);

  // nothing on stderr: stdout's last lines; a missing module is this machine's
  const auto missing = judge_process_check(named, exited(2, "ModuleNotFoundError: No module named 'scipy'\n"));
  EXPECT_EQ(missing.detail, "exit 2: ModuleNotFoundError: No module named 'scipy'");
  EXPECT_EQ(missing.failure, FailureKind::environment);

  // a crash: where Python's fault handler says it happened, not the loaded modules it lists last
  auto crashed = exited(0, "device 0: roi_align_rotated ok\n",
                        "Fatal Python error: Segmentation fault\n\nCurrent thread 0x7f (most recent call first):\n"
                        "  File \"/v/site-packages/marlin/__init__.py\", line 35 in mul\n"
                        "  File \"/t/test.py\", line 131 in test_errors\n\nExtension modules: numpy, torch._C\n");
  crashed.status = ExitStatus{-1, true, 11};
  EXPECT_EQ(judge_process_check(named, crashed).detail,
            "killed by signal 11 (Segmentation fault): Fatal Python error: Segmentation fault in File "
            "\"/v/site-packages/marlin/__init__.py\", line 35 in mul");

  auto timed_out = exited(0);
  timed_out.timed_out = true;
  EXPECT_FALSE(judge_process_check(named, timed_out).ok);
  EXPECT_EQ(judge_process_check(named, timed_out).detail.rfind("timed out: ", 0), 0u);
}

TEST(DeviceValidationJudgement, ModuleLoadsCountWhatLoadedAndNameTheFirstFailure) {
  ModuleLoadReport report;
  report.devices = {"0: NVIDIA H200 (9.0)", "1: NVIDIA H200 (9.0)"};
  report.loads = {{"a.whl!a/_C.so", 0, 0, "CUDA_SUCCESS"},
                  {"a.whl!a/_C.so", 4096, 1, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
                  {"a.whl!a/_D.so", 0, 1, "CUDA_ERROR_INVALID_PTX"}};
  report.skipped = 2;
  const auto check = judge_module_loads(fresh_load_check(), true, report);
  EXPECT_FALSE(check.ok);
  EXPECT_EQ(check.failure, FailureKind::kernel);
  EXPECT_EQ(check.detail,
            "1/3 module loads ok on 2 GPUs (2 without PTX for the GPU skipped); first failure: a.whl!a/_C.so "
            "container at offset 4096 on GPU 1: CUDA_ERROR_NO_BINARY_FOR_GPU");

  report.loads.resize(1);
  report.skipped = 0;
  report.devices.resize(1);
  const auto loaded = judge_module_loads(fresh_load_check(), true, report);
  EXPECT_TRUE(loaded.ok);
  EXPECT_EQ(loaded.failure, FailureKind::none);
  EXPECT_EQ(loaded.detail, "1/1 module loads ok on 1 GPU");
  // every load fine, but a loader process failed: not proven
  EXPECT_FALSE(judge_module_loads(fresh_load_check(), false, report).ok);
  // an unreadable library fails it and is named
  report.unreadable = {"a.whl!a/_E.so: truncated fatbin"};
  const auto unreadable = judge_module_loads(fresh_load_check(), true, report);
  EXPECT_FALSE(unreadable.ok);
  EXPECT_EQ(unreadable.detail, "1/1 module loads ok on 1 GPU; unreadable: a.whl!a/_E.so: truncated fatbin");
}

TEST(DeviceValidationJudgement, NoLoadsAtAllIsAFailureSayingWhy) {
  ModuleLoadReport none;
  auto check = judge_module_loads(fresh_load_check(), true, none);
  EXPECT_FALSE(check.ok);
  EXPECT_EQ(check.detail, "the wheel has no loadable fatbin");
  none.unavailable_reason = "cuInit: CUDA_ERROR_NO_DEVICE";
  EXPECT_EQ(judge_module_loads(fresh_load_check(), true, none).detail, "cuInit: CUDA_ERROR_NO_DEVICE");
}

TEST(DeviceValidationJudgement, FatbinLoaderShardsAreMergedAndTheFirstWithoutAReportSaysWhy) {
  // two shards, each its share of the containers: judged as one report
  std::vector<FatbinLoaderRun> shards = {{exited(0, loader_report({"CUDA_SUCCESS", "CUDA_SUCCESS"})), {}},
                                         {exited(0, loader_report({"CUDA_SUCCESS"}, 2)), {}}};
  const auto merged = judge_fatbin_loaders(fresh_load_check(), shards);
  EXPECT_TRUE(merged.ok);
  EXPECT_EQ(merged.detail, "3/3 module loads ok on 1 GPU");

  // a shard that crashed without a report: its own reason, and its kind, not the others' counts
  DeviceCheck crashed{"", false, "killed by signal 11 (Segmentation fault): ", {}, 0, FailureKind::test};
  shards.push_back({exited(139), crashed});
  shards.push_back({exited(1, "not json"), {"", false, "exit 1: not json", {}, 0, FailureKind::kernel}});
  const auto failed = judge_fatbin_loaders(fresh_load_check(), shards);
  EXPECT_FALSE(failed.ok);
  EXPECT_EQ(failed.detail, crashed.detail);
  EXPECT_EQ(failed.failure, FailureKind::test);

  // no report and nothing said: the loader's silence is named
  const auto silent = judge_fatbin_loaders(fresh_load_check(), {{exited(0), {}}});
  EXPECT_EQ(silent.detail, "the fatbin loader printed no report");
  EXPECT_FALSE(silent.ok);
}

TEST(DeviceValidationJudgement, OnlyTheProbesExitFourMeansTorchCannotJit) {
  EXPECT_TRUE(torch_probe_found_no_jit(exited(4)));
  EXPECT_FALSE(torch_probe_found_no_jit(exited(3)));  // no torch
  EXPECT_FALSE(torch_probe_found_no_jit(exited(0)));  // torch runs from PTX
  auto timed_out = exited(4);
  timed_out.timed_out = true;
  EXPECT_FALSE(torch_probe_found_no_jit(timed_out));
  ProcessResult killed;
  killed.status = ExitStatus::killed(4);
  EXPECT_FALSE(torch_probe_found_no_jit(killed));
}

TEST(DeviceValidationJudgement, AnExerciserFailureIsTheKernelsUnlessAPackageLackedAModule) {
  const std::vector<std::string> packages = {"flash_attn"};
  EXPECT_EQ(exercise_failure(exercise_ended(0, "12 ops agree"), packages), FailureKind::none);
  EXPECT_EQ(exercise_failure(exercise_ended(1, "1 of 12 ops differ"), packages), FailureKind::kernel);
  // exit 2: a package did not import; a dependency this machine lacks, or the wheel's own module missing
  EXPECT_EQ(exercise_failure(exercise_ended(2, "flash_attn: No module named 'einops'"), packages),
            FailureKind::environment);
  EXPECT_EQ(exercise_failure(exercise_ended(2, "No module named 'flash_attn.ops'"), packages), FailureKind::test);
  OpExercise no_torch;
  no_torch.no_torch = true;
  EXPECT_EQ(exercise_failure(no_torch, packages), FailureKind::none);  // nothing to exercise is no failure

  auto mismatch = exercise_ended(1, "1 of 12 ops differ");
  mismatch.seconds = 7;
  mismatch.log = "/w/exercise-native.log";
  const auto check = exercise_check("op exerciser", mismatch, packages);
  EXPECT_EQ(check.name, "op exerciser");
  EXPECT_FALSE(check.ok);
  EXPECT_EQ(check.detail, "1 of 12 ops differ");
  EXPECT_EQ(check.log, mismatch.log);
  EXPECT_EQ(check.seconds, 7);
  EXPECT_EQ(check.failure, FailureKind::kernel);
}

TEST(DeviceValidationJudgement, ThePtxExerciseNeedsNativeOutputsToCompareWith) {
  EXPECT_TRUE(exercise_has_native_outputs(exercise_ended(0, "")));
  EXPECT_TRUE(exercise_has_native_outputs(exercise_ended(1, "")));      // a mismatch still saved its outputs
  EXPECT_FALSE(exercise_has_native_outputs(exercise_ended(2, "")));     // a package did not import
  EXPECT_FALSE(exercise_has_native_outputs(exercise_ended(0, "", 0)));  // no op exercised
  auto not_run = exercise_ended(0, "");
  not_run.ran = false;
  EXPECT_FALSE(exercise_has_native_outputs(not_run));
}

TEST(DeviceValidationJudgement, NoKernelLaunchedIsTheWheelsFaultOnlyWhenTheRecorderRan) {
  KernelCensus census;
  census.recorded = true;
  census.wheel_kernels = 5;
  auto check = unlaunched_kernels_check(census);
  EXPECT_FALSE(check.ok);
  EXPECT_EQ(check.failure, FailureKind::test);
  EXPECT_EQ(check.detail,
            "launched 0 of 5 kernels of this wheel: the wheel's modules load, but nothing proved a kernel of it runs");
  census.recorded = false;
  census.not_recorded = "libarchbuild_launch_recorder.so is missing";
  check = unlaunched_kernels_check(census);
  EXPECT_EQ(check.failure, FailureKind::environment);
  EXPECT_EQ(check.detail.rfind("kernel launches not counted: libarchbuild_launch_recorder.so is missing", 0), 0u);
}

TEST(DeviceValidationJudgement, AnExcusedCheckPassesSayingWhy) {
  DeviceCheck check{
      "kernel test (CUDA_FORCE_PTX_JIT=1)", false, "exit 1: ...", "/w/kernel-test-ptx.log", 3, FailureKind::kernel};
  excuse_check(check, "not judged: torch cannot JIT");
  EXPECT_TRUE(check.ok);
  EXPECT_EQ(check.failure, FailureKind::none);
  EXPECT_EQ(check.detail, "not judged: torch cannot JIT");
  EXPECT_EQ(check.log, "/w/kernel-test-ptx.log");  // its log still shows what happened
}
