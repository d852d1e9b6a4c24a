#include "validate/device_validation.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <future>
#include <string_view>
#include <thread>

#include "core/data_dir.h"
#include "core/error.h"
#include "core/owned_dir.h"
#include "core/regular_file.h"
#include "core/self_executable.h"
#include "core/strings.h"
#include "gpu/module_loader.h"
#include "process/layered_venv.h"
#include "process/run_process.h"
#include "validate/device_validation_judgement.h"
#include "wheel/wheel_archive.h"

namespace archbuild {

namespace {
constexpr std::string_view kNativeKernelTestCheck = "kernel test (CUDA_DISABLE_PTX_JIT=1";
}  // namespace

bool DeviceValidation::ok() const {
  if (!ran || checks.empty()) return false;
  for (const auto& check : checks)
    if (!check.ok) return false;
  return true;
}

bool DeviceValidation::kernels_launched() const {
  // A wheel without kernels has nothing to launch; one whose kernels could not be read proves nothing.
  return ran && census && (census->any_launched() || (census->wheel_kernels == 0 && !census->unreadable));
}

bool DeviceValidation::results_compared() const {
  if (!kernels_launched()) return false;
  if (exercise && exercise->ok() && exercise->compared > 0) return true;
  return std::any_of(checks.begin(), checks.end(), [](const DeviceCheck& check) {
    return check.ok && check.name.starts_with(kNativeKernelTestCheck);
  });
}

bool DeviceValidation::failed_by_environment() const {
  if (!ran || ok()) return false;
  for (const auto& check : checks)
    if (!check.ok && check.failure != FailureKind::environment) return false;
  return true;
}

nlohmann::json DeviceValidation::to_json() const {
  auto list = nlohmann::json::array();
  for (const auto& check : checks)
    list.push_back({{"name", check.name},
                    {"ok", check.ok},
                    {"failure", to_string(check.failure)},
                    {"detail", check.detail},
                    {"log", check.log.string()},
                    {"seconds", check.seconds}});
  auto gpu_list = nlohmann::json::array();
  for (const auto& gpu : gpus) gpu_list.push_back({{"index", gpu.index}, {"name", gpu.name}, {"cc", gpu.cc.dotted()}});
  auto json = nlohmann::json{{"ran", ran},
                             {"skipped_reason", skipped_reason},
                             {"gpus", gpu_list},
                             {"cuda_visible_devices", visible_devices},
                             {"user_cuda_visible_devices", user_visible_devices},
                             {"ok", ok()},
                             {"failed_by_environment", failed_by_environment()},
                             {"checks", list}};
  if (wheel_dependencies) json["wheel_dependencies"] = wheel_dependencies->to_json();
  if (project_tests) json["project_tests"] = project_tests->to_json();
  if (census) json["kernel_census"] = census->to_json();
  if (exercise) json["op_exercise"] = exercise->to_json();
  if (exercise_ptx) json["op_exercise_ptx"] = exercise_ptx->to_json();
  json["kernels_launched"] = kernels_launched();
  return json;
}

namespace {

// Everything validation writes into its work dir: all it ever removes there.
constexpr const char* kVenvName = "venv";
constexpr const char* kLoadNativeLog = "load-native.log";
constexpr const char* kLoadPtxLog = "load-ptx.log";
constexpr const char* kPipLog = "pip-install.log";
constexpr const char* kKernelNativeLog = "kernel-test-native.log";
constexpr const char* kKernelPtxLog = "kernel-test-ptx.log";
constexpr const char* kTorchPtxProbeLog = "torch-ptx-probe.log";
constexpr const char* kProjectTestsLog = "project-tests.log";
constexpr const char* kProjectTestsReport = "project-tests.jsonl";
constexpr const char* kLaunchDir = "launches";
constexpr const char* kExerciseLog = "exercise-native.log";
constexpr const char* kExerciseResult = "exercise-native.json";
constexpr const char* kExercisePtxLog = "exercise-ptx.log";
constexpr const char* kExercisePtxResult = "exercise-ptx.json";
constexpr const char* kExerciseOutputs = "exercise-outputs.pt";
constexpr const char* kJitCacheDir = "jit-cache";
constexpr const char* kTestDependenciesLog = "test-dependencies.log";
constexpr const char* kWheelDependenciesLog = "wheel-dependencies.log";
constexpr std::array kOwnNames = {kVenvName,
                                  kLoadNativeLog,
                                  kLoadPtxLog,
                                  kPipLog,
                                  kKernelNativeLog,
                                  kKernelPtxLog,
                                  kTorchPtxProbeLog,
                                  kProjectTestsLog,
                                  kProjectTestsReport,
                                  kLaunchDir,
                                  kExerciseLog,
                                  kExerciseResult,
                                  kExercisePtxLog,
                                  kExercisePtxResult,
                                  kExerciseOutputs,
                                  kJitCacheDir,
                                  kTestDependenciesLog,
                                  kWheelDependenciesLog,
                                  kWheelDependencyConstraints};

OwnedDir validation_work_dir(const std::filesystem::path& work_dir) {
  std::vector<std::string> own_names(kOwnNames.begin(), kOwnNames.end());
  own_names.emplace_back(kCleanRoomDir);  // the clean room's, which it clears itself
  return {work_dir, kValidationWorkMarker, std::move(own_names), "the validation work dir"};
}

// Clears the previous run's venv and logs, and nothing else: not the clean
// room this validation may have run just before.
void prepare_work_dir(const std::filesystem::path& work_dir) {
  const auto owned = validation_work_dir(work_dir);
  owned.check();
  std::filesystem::create_directories(work_dir);
  for (const auto* name : kOwnNames) std::filesystem::remove_all(work_dir / name);  // a link is removed, not followed
  owned.claim();
}

using Env = std::map<std::string, std::optional<std::string>>;

// Both modes: a launch's error comes from that launch, and a step that
// crashes says where: Python's stack on the fatal signal, and what it
// printed up to then (not lost in a buffer).
const Env kEveryCheck = {{"CUDA_LAUNCH_BLOCKING", "1"}, {"PYTHONFAULTHANDLER", "1"}, {"PYTHONUNBUFFERED", "1"}};
// Native SASS only: a missing arch fails instead of hiding behind the JIT.
const Env kNativeOnly = {{"CUDA_DISABLE_PTX_JIT", "1"}, {"CUDA_FORCE_PTX_JIT", std::nullopt}};
// PTX only: proves the embedded PTX JIT-compiles and runs. The driver's
// JIT cache is the work dir's own (emptied with it): the module loads, the
// kernel test and the exerciser each reuse what the others compiled.
Env ptx_only(const std::filesystem::path& work_dir) {
  return {{"CUDA_FORCE_PTX_JIT", "1"},
          {"CUDA_DISABLE_PTX_JIT", std::nullopt},
          {"CUDA_CACHE_DISABLE", std::nullopt},
          {"CUDA_CACHE_PATH", (work_dir / kJitCacheDir).string()},
          {"CUDA_CACHE_MAXSIZE", "4294967296"}};
}

struct Step {
  DeviceCheck check;
  ProcessResult result;
  std::string transcript;  // the command line and what it printed
};

Step run_step(const std::string& name, const std::vector<std::string>& argv, const Env& env,
              const std::filesystem::path& work_dir, const std::string& log_name);

// Whether `python`'s torch imports but cannot run a kernel of its own in
// `env` (exit 4): a torch without usable PTX under CUDA_FORCE_PTX_JIT=1.
// No torch (exit 3), or torch running fine, is false.
constexpr const char* kTorchCannotJit =
    "not judged: torch's own kernels do not run under CUDA_FORCE_PTX_JIT=1 on this GPU (its wheel carries no PTX "
    "this GPU can JIT), so nothing that uses torch can run from PTX";

bool torch_fails_under_forced_jit(const std::string& python, const Env& env, const std::filesystem::path& work_dir) {
  static constexpr const char* kProbe =
      "import sys\n"
      "try:\n    import torch\nexcept Exception:\n    sys.exit(3)\n"
      "try:\n    float((torch.ones(8, device='cuda') * 2).sum().item())\nexcept Exception as error:\n"
      "    print(error)\n    sys.exit(4)\n";
  auto probe = run_step("torch under forced PTX JIT", {python, "-c", kProbe}, env, work_dir, kTorchPtxProbeLog);
  return torch_probe_found_no_jit(probe.result);
}

// A child process run as a check: its result, time and transcript (the log's text).
Step run_unlogged(const std::string& name, const std::vector<std::string>& argv, const Env& env,
                  const std::filesystem::path& work_dir) {
  Step step;
  ProcessOptions options;
  options.working_dir = work_dir;  // never the source tree: imports must come from the installed wheel
  options.env_overrides = env;
  options.timeout = std::chrono::minutes(20);
  auto started = std::chrono::steady_clock::now();
  step.result = run_process(argv, options);
  DeviceCheck check;
  check.name = name;
  check.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  step.check = judge_process_check(check, step.result);
  step.transcript = "$ " + join(argv, " ") + "\n" + step.result.out + step.result.err;
  return step;
}

Step run_step(const std::string& name, const std::vector<std::string>& argv, const Env& env,
              const std::filesystem::path& work_dir, const std::string& log_name) {
  auto step = run_unlogged(name, argv, env, work_dir);
  step.check.log = work_dir / log_name;
  write_whole_file(step.check.log, step.transcript);
  return step;
}

// Loads the wheel's fatbins in `shards` loader processes at once (each its
// own CUDA context, every shard-th container): the forced PTX JIT is
// compile work the machine's cores share. One log holds every loader's output.
DeviceCheck load_check(const std::string& name, const std::filesystem::path& wheel, const Env& env,
                       const std::filesystem::path& work_dir, const std::string& log_name, size_t shards = 1) {
  const std::string self = self_executable();
  const auto started = std::chrono::steady_clock::now();
  std::vector<std::future<Step>> running;
  for (size_t i = 0; i < shards; ++i) {
    std::vector<std::string> argv = {self, kLoadFatbinsCommand};
    if (shards > 1) argv.insert(argv.end(), {kLoadShardOption, LoadShard{i, shards}.str()});
    argv.push_back(wheel.string());
    running.push_back(std::async(std::launch::async, [=] { return run_unlogged(name, argv, env, work_dir); }));
  }
  DeviceCheck check{name, true, "", work_dir / log_name, 0};
  std::string transcript;
  std::vector<FatbinLoaderRun> loaders;
  for (auto& run : running) {
    auto step = run.get();
    transcript += step.transcript;
    loaders.push_back({std::move(step.result), std::move(step.check)});
  }
  write_whole_file(check.log, transcript);
  check.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return judge_fatbin_loaders(check, loaders);
}

// Loader processes for the PTX check: one per core, at most 16.
size_t ptx_load_shards() { return std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 16); }

}  // namespace

void check_validation_work_dir(const std::filesystem::path& work_dir) { validation_work_dir(work_dir).check(); }
void claim_validation_work_dir(const std::filesystem::path& work_dir) { validation_work_dir(work_dir).claim(); }

namespace {

// One validation's steps, in order, each a method: the state they share (the
// venv, the launch recorder, whether torch runs from PTX) lives here.
class DeviceValidationRun {
 public:
  explicit DeviceValidationRun(const DeviceValidationRequest& request) : request_(request) {}

  DeviceValidation run() {
    if (request_.gpus.devices.empty()) return skipped();
    validation_.ran = true;
    prepare_work_dir(request_.work_dir);
    load_fatbins();
    if (!make_venv() || !install_wheel()) return std::move(validation_);
    install_its_dependencies();
    start_recorder();
    kernel_tests();
    if (request_.exercise_ops) exercise_ops();
    if (request_.tests && !request_.source_dir.empty()) project_tests();
    take_kernel_census();
    return std::move(validation_);
  }

 private:
  DeviceValidation skipped() {
    validation_.skipped_reason = device_skipped_reason(request_.gpus.unavailable_reason);
    return std::move(validation_);
  }

  // A mode's settings (kNativeOnly, ptx_only), with every check's, on the GPUs validated.
  Env on_targets(Env env) const {
    env.insert(kEveryCheck.begin(), kEveryCheck.end());
    if (!request_.visible_devices.empty()) env["CUDA_VISIBLE_DEVICES"] = request_.visible_devices;
    return env;
  }
  // Every process after the install carries the launch recorder: the census
  // counts what the kernel test, the exerciser and the project's tests launched.
  Env recorded(Env env) const {
    for (const auto& [key, value] : recorder_) env[key] = value;
    return env;
  }
  Env native_env() const { return recorded(on_targets(kNativeOnly)); }
  Env ptx_env() const { return recorded(on_targets(ptx_only(request_.work_dir))); }

  void load_fatbins() {
    add(load_check("fatbins load natively (CUDA_DISABLE_PTX_JIT=1)", request_.wheel, on_targets(kNativeOnly),
                   request_.work_dir, kLoadNativeLog));
    if (request_.ptx_requested)
      add(load_check("fatbins load from PTX (CUDA_FORCE_PTX_JIT=1)", request_.wheel,
                     on_targets(ptx_only(request_.work_dir)), request_.work_dir, kLoadPtxLog, ptx_load_shards()));
  }

  // A fresh venv that still sees the interpreter's packages: a .pth file
  // names its site dirs, after the venv's own, so the wheel shadows any
  // installed copy (--system-site-packages alone would give the base
  // interpreter's, not a parent venv's).
  bool make_venv() {
    const auto venv = request_.work_dir / kVenvName;
    DeviceCheck check{
        "fresh venv", true, venv.string() + " (with " + request_.python + "'s site-packages behind it)", {}, 0};
    const auto started = std::chrono::steady_clock::now();
    try {
      venv_python_ = make_layered_venv(request_.python, venv);
    } catch (const UserError& e) {
      check.ok = false;
      check.detail = e.what();
      check.failure = FailureKind::environment;
    }
    check.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return add(check);
  }

  bool install_wheel() {
    auto install = run_step("pip install --no-deps --no-index",
                            {venv_python_, "-m", "pip", "install", "--no-deps", "--no-index", "--no-cache-dir",
                             "--disable-pip-version-check", "--no-warn-script-location", request_.wheel.string()},
                            {{"PIP_CONFIG_FILE", "/dev/null"}}, request_.work_dir, kPipLog);
    if (install.check.ok) install.check.detail = request_.wheel.filename().string() + " installed";
    if (!install.check.ok) install.check.failure = FailureKind::test;  // the wheel does not install
    return add(install.check);
  }

  // What `pip install WHEEL` would bring on a node and this venv lacks: a
  // check only when something was missing, and one that says, never fails
  // (a check that needs what could not be installed fails, naming it).
  void install_its_dependencies() {
    const auto name = WheelName::parse(request_.wheel.filename().string());
    if (!name) return;
    const auto started = std::chrono::steady_clock::now();
    const auto log = request_.work_dir / kWheelDependenciesLog;
    auto dependencies = install_wheel_dependencies(venv_python_, name->name, request_.test_dependencies, log,
                                                   request_.work_dir);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (!dependencies.summary().empty())
      add({"wheel dependencies", true, dependencies.summary(), log, seconds, FailureKind::none});
    validation_.wheel_dependencies = std::move(dependencies);
  }

  void start_recorder() {
    launch_dir_ = request_.work_dir / kLaunchDir;
    recorder_ = launch_recorder_env(launch_dir_, request_.python, recorder_missing_);
  }

  // Asked at most once: whether torch's own kernels can run from PTX here.
  bool torch_cannot_jit() {
    if (!torch_without_ptx_)
      torch_without_ptx_ = torch_fails_under_forced_jit(venv_python_, on_targets(ptx_only(request_.work_dir)),
                                                        request_.work_dir);
    return *torch_without_ptx_;
  }

  void kernel_tests() {
    if (request_.kernel_test.empty()) {
      add({"kernel test",
           false,
           "the recipe names no kernel_test: nothing launched a kernel",
           {},
           0,
           FailureKind::setup});
      return;
    }
    std::vector<std::string> argv = {venv_python_, request_.kernel_test.string()};
    argv.insert(argv.end(), request_.packages.begin(), request_.packages.end());
    auto native = run_step(std::string(kNativeKernelTestCheck) + ", CUDA_LAUNCH_BLOCKING=1)", argv, native_env(),
                           request_.work_dir, kKernelNativeLog);
    if (native.check.ok) native.check.detail = last_lines(native.result.out, 1);
    add(native.check);
    if (!request_.ptx_requested) return;
    auto ptx = run_step("kernel test (CUDA_FORCE_PTX_JIT=1)", argv, ptx_env(), request_.work_dir, kKernelPtxLog);
    if (ptx.check.ok) ptx.check.detail = last_lines(ptx.result.out, 1);
    // CUDA_FORCE_PTX_JIT holds for the whole process: a kernel test that
    // uses torch runs torch's own kernels from PTX too, and a torch wheel
    // whose PTX is only for a newer CC (cu130: compute_120) cannot run
    // that way on this GPU. Then the test cannot judge the wheel's PTX
    // (the fatbin load from PTX above did), and says so.
    if (!ptx.check.ok && torch_cannot_jit())
      excuse_check(ptx.check,
                   kTorchCannotJit + std::string("; the wheel's own PTX was proven by the fatbin load from PTX"));
    add(ptx.check);
  }

  void exercise_ops() {
    OpExerciseRequest exercise{venv_python_,
                               request_.packages,
                               request_.extension_packages,
                               data_dir() / "recipes" / "tests" / "exercise_ops.py",
                               request_.work_dir / kExerciseResult,
                               request_.work_dir / kExerciseLog,
                               request_.work_dir / kExerciseOutputs,
                               false,
                               "native",
                               request_.exercise_budget_seconds,
                               native_env(),
                               request_.work_dir};
    auto native = run_op_exercise(exercise);
    if (!native.no_torch) {
      add(exercise_check("op exerciser (CPU against each GPU, CUDA_DISABLE_PTX_JIT=1)", native, request_.packages));
      // SASS against PTX: the same inputs again, the PTX JIT-compiled, compared with the native results.
      if (request_.ptx_requested && exercise_has_native_outputs(native)) exercise_ops_from_ptx(exercise);
    }
    validation_.exercise = std::move(native);
  }

  void exercise_ops_from_ptx(OpExerciseRequest exercise) {
    exercise.compare_with_saved = true;
    exercise.label = "ptx";
    exercise.result_file = request_.work_dir / kExercisePtxResult;
    exercise.log_file = request_.work_dir / kExercisePtxLog;
    exercise.env = ptx_env();
    auto ptx = run_op_exercise(exercise);
    auto check = exercise_check("op exerciser (CUDA_FORCE_PTX_JIT=1 against the native results)", ptx,
                                request_.packages);
    if (!ptx.ok() && torch_cannot_jit()) excuse_check(check, kTorchCannotJit + std::string(" (") + ptx.summary + ")");
    add(check);
    validation_.exercise_ptx = std::move(ptx);
  }

  void project_tests() {
    ProjectTestRequest tests{*request_.tests,
                             request_.tests_origin,
                             request_.source_dir,
                             venv_python_,
                             request_.packages,
                             data_dir() / "recipes" / "tests" / "pytest",
                             request_.work_dir / kProjectTestsReport,
                             request_.work_dir / kProjectTestsLog,
                             native_env(),
                             request_.test_dependencies,
                             request_.work_dir / kTestDependenciesLog};
    auto result = run_project_tests(tests);
    add({"project tests (" + request_.tests_origin + ": " + join(request_.tests->command, " ") + ")", result.ok,
         result.summary, tests.log_file, result.seconds, result.failure});
    validation_.project_tests = std::move(result);
  }

  // The census: the wheel's kernels in the images these GPUs run, against what launched.
  void take_kernel_census() {
    std::vector<ComputeCapability> ccs;
    for (const auto& gpu : request_.gpus.devices) ccs.push_back(gpu.cc);
    bool unreadable = false;
    auto wheel_kernels = wheel_kernels_for(request_.wheel, ccs, request_.ptx_requested, unreadable);
    LaunchRecords records;
    if (recorder_.empty())
      records.not_recorded = recorder_missing_;
    else
      records = read_launch_records(launch_dir_);
    validation_.census = take_census(wheel_kernels, records);
    validation_.census->unreadable = unreadable;
    if (request_.require_kernel_launch && !validation_.kernels_launched())
      add(unlaunched_kernels_check(*validation_.census));
  }

  bool add(const DeviceCheck& check) {
    validation_.checks.push_back(check);
    return check.ok;
  }

  const DeviceValidationRequest& request_;
  DeviceValidation validation_;
  std::string venv_python_;
  std::filesystem::path launch_dir_;
  Env recorder_;
  std::string recorder_missing_;
  std::optional<bool> torch_without_ptx_;
};

}  // namespace

DeviceValidation validate_on_device(const DeviceValidationRequest& request) {
  return DeviceValidationRun(request).run();
}

}  // namespace archbuild
