#include "validate/device_validation_judgement.h"

#include <nlohmann/json.hpp>

#include "core/strings.h"
#include "validate/python_crash.h"

namespace archbuild {

std::string device_skipped_reason(const std::string& unavailable_reason) {
  return unavailable_reason.rfind("no visible GPU is a target", 0) == 0 ? unavailable_reason
                                                                        : "no GPU (" + unavailable_reason + ")";
}

DeviceCheck judge_process_check(DeviceCheck check, const ProcessResult& result) {
  check.ok = result.succeeded();
  if (!check.ok) {
    const auto& said = result.err.empty() ? result.out : result.err;
    const auto crash = python_crash_line(said);  // a crash says where, not its last lines (the loaded modules)
    check.detail = result.describe_status() + ": " + (crash.empty() ? last_lines(said, 3) : crash);
    check.failure = classify_failure(result.out + "\n" + result.err, {});
  }
  return check;
}

DeviceCheck judge_fatbin_loaders(DeviceCheck check, const std::vector<FatbinLoaderRun>& loaders) {
  std::vector<ModuleLoadReport> reports;
  bool loaders_succeeded = true;
  for (const auto& loader : loaders) {
    auto parsed = nlohmann::json::parse(loader.result.out, nullptr, false);
    if (parsed.is_discarded() && check.ok) {
      check.ok = false;  // the first loader without a report says why
      check.detail = loader.check.detail.empty() ? "the fatbin loader printed no report" : loader.check.detail;
      check.failure = loader.check.failure;
    }
    if (!parsed.is_discarded()) reports.push_back(ModuleLoadReport::from_json(parsed));
    loaders_succeeded = loaders_succeeded && loader.result.succeeded();
  }
  if (!check.ok) return check;
  return judge_module_loads(check, loaders_succeeded, ModuleLoadReport::merged(reports));
}

DeviceCheck judge_module_loads(DeviceCheck check, bool loaders_succeeded, const ModuleLoadReport& report) {
  size_t failed = report.failed();
  check.ok = loaders_succeeded && failed == 0 && !report.loads.empty();
  if (!check.ok) check.failure = FailureKind::kernel;  // the driver refused the wheel's code
  if (report.loads.empty() && report.unreadable.empty()) {
    check.ok = false;
    check.detail = report.unavailable_reason.empty() ? "the wheel has no loadable fatbin" : report.unavailable_reason;
    return check;
  }
  check.detail = std::to_string(report.loads.size() - (failed - report.unreadable.size())) + "/" +
                 std::to_string(report.loads.size()) + " module loads ok on " + std::to_string(report.devices.size()) +
                 " GPU" + (report.devices.size() == 1 ? "" : "s") +
                 (report.skipped ? " (" + std::to_string(report.skipped) + " without PTX for the GPU skipped)" : "");
  for (const auto& load : report.loads)
    if (!load.ok()) {
      check.detail += "; first failure: " + load.file + " container at offset " + std::to_string(load.offset) +
                      " on GPU " + std::to_string(load.device) + ": " + load.status;
      break;
    }
  for (const auto& text : report.unreadable) check.detail += "; unreadable: " + text;
  return check;
}

bool torch_probe_found_no_jit(const ProcessResult& probe) {
  return !probe.timed_out && !probe.status.signaled && probe.status.code == 4;
}

FailureKind exercise_failure(const OpExercise& exercise, const std::vector<std::string>& packages) {
  if (exercise.ok()) return FailureKind::none;
  return exercise.exit_code == 2 ? classify_failure(exercise.summary, packages) : FailureKind::kernel;
}

DeviceCheck exercise_check(const std::string& name, const OpExercise& exercise,
                           const std::vector<std::string>& packages) {
  return {name, exercise.ok(), exercise.summary, exercise.log, exercise.seconds, exercise_failure(exercise, packages)};
}

bool exercise_has_native_outputs(const OpExercise& native) {
  return native.ran && native.exit_code <= 1 && native.exercised > 0;
}

DeviceCheck unlaunched_kernels_check(const KernelCensus& census) {
  return {"a kernel of the wheel launched (require_kernel_launch)",
          false,
          census.summary() + ": the wheel's modules load, but nothing proved a kernel of it runs",
          {},
          0,
          census.recorded ? FailureKind::test : FailureKind::environment};
}

void excuse_check(DeviceCheck& check, const std::string& why) {
  check.ok = true;
  check.failure = FailureKind::none;
  check.detail = why;
}

}  // namespace archbuild
