#include "validate/build_verdict.h"

#include "binary/kernel_names.h"

namespace archbuild {

ValidatedWheel reported_validation(const std::filesystem::path& wheel, const WheelValidation& validation) {
  ValidatedWheel reported{wheel.string(), validation.device.ran, std::nullopt, validation.to_json()};
  reported.detail["wheel"] = wheel.string();
  reported.audit = validation.audit.summary();
  if (const auto& census = validation.device.census) {
    ValidatedWheel::Census kept{census->summary(), {}, census->launched.size()};
    for (const auto& name : census->launched) kept.launched.push_back(demangle(name));
    reported.census = std::move(kept);
  }
  return reported;
}

void VerdictTally::add(const std::filesystem::path& wheel, const WheelValidation& validation) {
  // Not proven only while every failed wheel failed for this machine's reasons alone.
  failed_ = failed_ || !validation.ok();
  invalid_ = invalid_ || (!validation.ok() && !validation.failed_by_environment());
  verdict_.verdict = !failed_ ? Verdict::valid : invalid_ ? Verdict::invalid : Verdict::untestable_here;
  verdict_.findings.push_back(reported_validation(wheel, validation));
  verdict_.scope = validation.scope();
  if (!validation.device.ran) verdict_.device_ran = false;
  if (!validation.device.kernels_launched()) verdict_.kernels_launched = false;
  if (!validation.device.results_compared()) verdict_.results_compared = false;
}

}  // namespace archbuild
