#pragma once

#include <string>

#include "core/exit_code.h"
#include "doctor/diagnosis.h"
#include "doctor/python_probe.h"

namespace archbuild {

// What `archbuild doctor` concludes from every interpreter it diagnosed.
enum class DoctorVerdict {
  ok,                   // torch found, no problem: exit 0
  problem,              // some diagnosis found a problem: exit 1
  nothing_to_diagnose,  // no interpreter has torch: exit 3 (this environment)
};
std::string to_string(DoctorVerdict verdict);  // "ok", "problem", "nothing-to-diagnose"
ExitCode exit_code_of(DoctorVerdict verdict);

// The interpreters' diagnoses, added up as they come.
class DoctorTally {
 public:
  void add(const PythonEnvironment& python, const Diagnosis& diagnosis);
  // No torch anywhere outranks a problem: nothing was diagnosed.
  DoctorVerdict verdict() const;

 private:
  bool any_torch_ = false;
  bool any_problem_ = false;
};

}  // namespace archbuild
