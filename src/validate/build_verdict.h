#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cache/validated_wheel.h"
#include "validate/wheel_validation.h"

namespace archbuild {

// What the validations of one build's wheels come to together.
enum class Verdict {
  valid,            // every wheel passed what ran
  invalid,          // a wheel failed: quarantined
  untestable_here,  // failed only because this machine could not run the checks: quarantined, not proven wrong
};

struct BuildVerdict {
  Verdict verdict = Verdict::valid;
  bool device_ran = true;                // every wheel's device checks ran (else static only)
  bool kernels_launched = true;          // and in each, a kernel of the wheel launched (else `loaded`)
  bool results_compared = true;          // and in each, their results agreed with a reference (else `launched`)
  std::vector<ValidatedWheel> findings;  // per wheel, as the report keeps it
  std::string scope;                     // the last wheel's scope sentence
};

// What the report keeps of `wheel`'s validation.
ValidatedWheel reported_validation(const std::filesystem::path& wheel, const WheelValidation& validation);

// Adds the wheels' validations up, one at a time, as they finish.
class VerdictTally {
 public:
  void add(const std::filesystem::path& wheel, const WheelValidation& validation);
  const BuildVerdict& verdict() const { return verdict_; }

 private:
  bool failed_ = false;
  bool invalid_ = false;  // a wheel failed for a reason of its own
  BuildVerdict verdict_;
};

}  // namespace archbuild
