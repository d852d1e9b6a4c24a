#include "doctor/doctor_verdict.h"

namespace archbuild {

std::string to_string(DoctorVerdict verdict) {
  switch (verdict) {
    case DoctorVerdict::ok: return "ok";
    case DoctorVerdict::problem: return "problem";
    case DoctorVerdict::nothing_to_diagnose: return "nothing-to-diagnose";
  }
  return "?";
}

ExitCode exit_code_of(DoctorVerdict verdict) {
  switch (verdict) {
    case DoctorVerdict::ok: return ExitCode::success;
    case DoctorVerdict::problem: return ExitCode::work_failed;
    case DoctorVerdict::nothing_to_diagnose: return ExitCode::environment;
  }
  return ExitCode::environment;
}

void DoctorTally::add(const PythonEnvironment& python, const Diagnosis& diagnosis) {
  any_torch_ = any_torch_ || python.torch_dir.has_value();
  any_problem_ = any_problem_ || diagnosis.has_problem();
}

DoctorVerdict DoctorTally::verdict() const {
  if (!any_torch_) return DoctorVerdict::nothing_to_diagnose;
  return any_problem_ ? DoctorVerdict::problem : DoctorVerdict::ok;
}

}  // namespace archbuild
