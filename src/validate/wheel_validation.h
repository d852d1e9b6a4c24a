#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "arch/arch_target.h"
#include "gpu/gpu_probe.h"
#include "recipe/recipe.h"
#include "validate/audit_tool.h"
#include "validate/clean_room.h"
#include "validate/device_validation.h"
#include "validate/static_validation.h"
#include "validate/test_dependencies.h"
#include "validate/wheel_audit.h"

namespace archbuild {

struct WheelValidationRequest {
  std::filesystem::path wheel;
  ArchList targets;
  const Recipe* recipe = nullptr;  // for its kernel test; may be null
  std::string python;
  GpuReport gpus;
  std::filesystem::path work_dir;
  bool allow_extra_archs = true;  // false: images of CCs not asked fail (a build's label promise)
  // The project's own tests (choose_project_tests), run from source_dir.
  std::optional<ProjectTests> tests;
  std::string tests_origin;
  std::filesystem::path source_dir;
  std::filesystem::path tree_dir;      // the whole work tree: its other projects are named when no CUDA code was built
  bool require_kernel_launch = false;  // the require_kernel_launch setting
  TestDependencySource test_dependencies;  // where the tests' dependencies may come from
  AuditTool audit_tool;                    // auditwheel for the audit; unavailable: the audit says why
  bool portable = false;                   // the portable setting: an audit that could not run fails too
};

// Static checks always; the device checks when a GPU is present and the
// static ones passed (a wheel missing an arch is not worth installing).
struct WheelValidation {
  StaticValidation static_checks;
  DeviceValidation device;
  WheelAudit audit;                // which libraries a node needs besides the wheel
  bool portable_required = false;  // the portable setting was on
  CleanRoom clean_room;            // with the portable setting: the wheel tried where only a node's things are
  // A need met only on this machine, or nowhere, fails the wheel: a node of
  // the fleet could not load it. With the portable setting, so does an audit
  // that could not run (the promise would go unchecked); without it, an
  // audit that could not run (offline, no auditwheel) is reported.
  bool audit_ok() const { return audit.ran ? audit.portable() : !portable_required; }
  // An ELF file with a C++ runtime of its own beside torch's fails the
  // wheel: the first error torch raises in it crashes the process.
  bool cxx_runtime_ok() const { return !audit.ran || audit.own_cxx_runtime().empty(); }
  bool ok() const {
    return static_checks.ok() && audit_ok() && cxx_runtime_ok() && (!clean_room.ran || clean_room.ok()) &&
           (!device.ran || device.ok());
  }
  // Failed, and only for this machine's reasons (no auditwheel for --portable,
  // its torch in the clean room, the device checks' environment): not proven,
  // nothing says the wheel is wrong.
  bool failed_by_environment() const;
  // "static + device: launched 3 of 4 kernels of this wheel, on 1 GPU",
  // "static + loaded: ...", "static only: device check skipped, no GPU (...)"
  std::string scope() const;
  nlohmann::json to_json() const;
};

WheelValidation validate_wheel(const WheelValidationRequest& request);

}  // namespace archbuild
