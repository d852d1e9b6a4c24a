#include "validate/build_verdict.h"

namespace archbuild {

void VerdictTally::add(const std::filesystem::path& wheel, const WheelValidation& validation) {
  failed_ = failed_ || !validation.ok();
  untestable_ = untestable_ || validation.device.failed_by_environment();
  verdict_.verdict = !failed_ ? Verdict::valid : untestable_ ? Verdict::untestable_here : Verdict::invalid;
  auto finding = validation.to_json();
  finding["wheel"] = wheel.string();
  verdict_.findings.push_back(std::move(finding));
  verdict_.scope = validation.scope();
  if (!validation.device.ran) verdict_.device_ran = false;
  if (!validation.device.kernels_launched()) verdict_.kernels_launched = false;
}

}  // namespace archbuild
