#include "doctor/doctor_verdict.h"

#include <gtest/gtest.h>

namespace archbuild {
namespace {

PythonEnvironment python_with_torch(bool torch) {
  PythonEnvironment python;
  if (torch) python.torch_dir = "/site/torch";
  return python;
}

Diagnosis diagnosis_with_problem(bool problem) {
  Diagnosis diagnosis;
  diagnosis.findings.push_back({problem, problem ? "torch has no kernel image for CC 6.1" : "a warning", ""});
  return diagnosis;
}

TEST(DoctorVerdict, EachVerdictHasItsWordAndExitCode) {
  EXPECT_EQ(to_string(DoctorVerdict::ok), "ok");
  EXPECT_EQ(to_string(DoctorVerdict::problem), "problem");
  EXPECT_EQ(to_string(DoctorVerdict::nothing_to_diagnose), "nothing-to-diagnose");
  EXPECT_EQ(exit_code_of(DoctorVerdict::ok), ExitCode::success);
  EXPECT_EQ(exit_code_of(DoctorVerdict::problem), ExitCode::work_failed);
  EXPECT_EQ(exit_code_of(DoctorVerdict::nothing_to_diagnose), ExitCode::environment);
}

TEST(DoctorVerdict, TheTallyNeedsTorchSomewhereAndOneProblemIsAProblem) {
  DoctorTally none;
  EXPECT_EQ(none.verdict(), DoctorVerdict::nothing_to_diagnose);  // no interpreter answered

  DoctorTally fine;
  fine.add(python_with_torch(true), diagnosis_with_problem(false));  // a warning is no problem
  fine.add(python_with_torch(false), diagnosis_with_problem(false));
  EXPECT_EQ(fine.verdict(), DoctorVerdict::ok);

  DoctorTally one_bad;
  one_bad.add(python_with_torch(true), diagnosis_with_problem(false));
  one_bad.add(python_with_torch(true), diagnosis_with_problem(true));
  one_bad.add(python_with_torch(true), diagnosis_with_problem(false));
  EXPECT_EQ(one_bad.verdict(), DoctorVerdict::problem);

  // Without torch anywhere nothing was diagnosed, whatever else was found.
  DoctorTally no_torch;
  no_torch.add(python_with_torch(false), diagnosis_with_problem(true));
  EXPECT_EQ(no_torch.verdict(), DoctorVerdict::nothing_to_diagnose);
  no_torch.add(python_with_torch(true), diagnosis_with_problem(false));
  EXPECT_EQ(no_torch.verdict(), DoctorVerdict::problem);  // the first interpreter's problem still counts
}

}  // namespace
}  // namespace archbuild
