#include "validate/wheel_validation.h"

#include <algorithm>
#include <cstdlib>

#include "arch/compat.h"
#include "builder/project_switches.h"
#include "cache/build_report.h"
#include "core/data_dir.h"
#include "core/regular_file.h"
#include "gpu/visible_devices.h"
#include "process/run_process.h"
#include "source/project_dirs.h"
#include "wheel/wheel_archive.h"

namespace archbuild {

namespace {
// A wheel with no CUDA code from a tree whose CUDA project is elsewhere
// (a pure-Python package at the root, the extension in a subdirectory).
std::string other_cuda_projects_hint(const std::filesystem::path& tree, const std::filesystem::path& built) {
  std::string current = built.lexically_relative(tree).generic_string();
  if (current == ".") current.clear();
  std::vector<ProjectDir> with_cuda;
  for (const auto& dir : find_project_dirs(tree))
    if (dir.cuda_sources && !dir.path.empty() && dir.path != current) with_cuda.push_back(dir);
  if (with_cuda.empty()) return "";
  return "this wheel was built from " + (current.empty() ? std::string("the tree's top") : current + "/") +
         ", and other projects of the tree hold the CUDA sources: build one with " +
         describe_project_dirs(with_cuda, current) + " (pip's git+URL#subdirectory=DIR)";
}

// What gates the CUDA extension of `setup_py`, read by archbuild's script
// with the build's interpreter (its syntax tree only: nothing of it runs).
ExtensionGates read_extension_gates(const std::string& python, const std::filesystem::path& setup_py) {
  ExtensionGates gates;
  if (python.empty() || !std::filesystem::is_regular_file(setup_py)) return gates;
  ProcessOptions options;
  options.timeout = std::chrono::seconds(60);
  auto result = run_process({python, (data_dir() / "recipes" / "frontends" / "extension_gates.py").string(),
                             setup_py.string()},
                            options);
  if (!result.succeeded()) return gates;
  try {
    auto answer = nlohmann::json::parse(result.out);
    gates.extensions = answer.value("extensions", size_t{0});
    gates.gpu_query = answer.value("gpu_query", false);
    for (const auto& gate : answer.value("gates", nlohmann::json::array()))
      if (gate.contains("name") && gate["name"].is_string())
        gates.gates.push_back(
            {gate["name"].get<std::string>(),
             gate.contains("value") && gate["value"].is_string() ? gate["value"].get<std::string>() : std::string(),
             gate.value("unset", false)});
    gates.read = true;
  } catch (const nlohmann::json::exception&) {
  }
  return gates;
}
}  // namespace

std::string WheelValidation::scope() const {
  if (device.ran) {
    const std::string census = device.census ? ": " + device.census->summary() : "";
    return device.kernels_launched() ? "static + device" + census
                                     : "static + loaded (its modules load natively; no kernel of it launched)" + census;
  }
  return "static only: device check skipped, " + device.skipped_reason;
}

bool WheelValidation::failed_by_environment() const {
  if (ok() || !static_checks.ok() || !cxx_runtime_ok()) return false;
  const bool audit_environment = audit_ok() || (!audit.ran && portable_required);
  const bool room_environment = !clean_room.ran || clean_room.ok() || clean_room.environment;
  const bool device_environment = !device.ran || device.ok() || device.failed_by_environment();
  return audit_environment && room_environment && device_environment;
}

nlohmann::json WheelValidation::to_json() const {
  auto json = static_checks.to_json();
  json["ok"] = ok();
  json["scope"] = scope();
  // The level this one wheel reached (a build's `validation_level` is the lowest of its wheels').
  json["level"] = to_string(proven_level(device.ran, device.kernels_launched(), device.results_compared()));
  json["device"] = device.to_json();
  json["audit"] = audit.to_json();
  json["audit"]["ok"] = audit_ok();
  json["clean_room"] = clean_room.to_json();
  return json;
}

WheelValidation validate_wheel(const WheelValidationRequest& request) {
  WheelValidation validation;
  validation.portable_required = request.portable;
  validation.static_checks = validate_wheel_static(request.wheel, request.targets, request.allow_extra_archs);
  // Only a wheel whose members match its RECORD is unpacked for the audit
  // (a member whose size lies could fill the disk).
  if (!validation.static_checks.record.ok() || !validation.static_checks.unreadable.empty())
    validation.audit.skipped_reason = "the wheel's RECORD or ELF files did not check out (above)";
  else if (request.audit_tool.ready())
    validation.audit = audit_wheel(request.python.empty() ? std::string("python3") : request.python,
                                   request.audit_tool.path, request.wheel);
  else
    validation.audit.skipped_reason = request.audit_tool.unavailable.empty() ? "no auditwheel was set up for it"
                                                                             : request.audit_tool.unavailable;
  auto& checked = validation.static_checks;
  if (checked.libraries.empty() && checked.unreadable.empty()) {
    std::string setup_py;
    if (!request.source_dir.empty()) (void)read_regular_file(request.source_dir / "setup.py", 1 << 20, setup_py);
    const auto gates = request.source_dir.empty()
                           ? ExtensionGates{}
                           : read_extension_gates(request.python, request.source_dir / "setup.py");
    checked.no_cuda_hint = cpu_only_build_hint(setup_py, gates);
    checked.cuda_switches = settable_cuda_switches(gates);
    if (!request.tree_dir.empty()) {
      const auto others = other_cuda_projects_hint(request.tree_dir, request.source_dir);
      if (!others.empty()) checked.no_cuda_hint = others + "; or else " + checked.no_cuda_hint;
    }
  }
  if (!checked.ok()) {
    validation.device.skipped_reason = "the static checks failed";
    return validation;
  }
  DeviceValidationRequest device;
  device.wheel = request.wheel;
  device.python = request.python;
  if (request.recipe && !request.recipe->kernel_test.empty())
    device.kernel_test = request.recipe->file.parent_path().parent_path() / request.recipe->kernel_test;
  // The packages holding native code must import; pure-Python packages
  // beside them are imported best effort (Deformable-DETR's ops wheel
  // installs a `modules` package whose relative imports reach above it).
  const auto top_level = wheel_top_level_names(request.wheel);
  device.packages = wheel_native_top_level_names(request.wheel);
  if (device.packages.empty()) device.packages = top_level;
  device.extension_packages = wheel_extension_packages(request.wheel);
  for (const auto& name : top_level)
    if (std::find(device.packages.begin(), device.packages.end(), name) == device.packages.end())
      device.extension_packages.push_back(name);
  device.tests = request.tests;
  device.tests_origin = request.tests_origin;
  device.source_dir = request.source_dir;
  // Only GPUs the targets serve can prove anything: an 8.0 wheel is not
  // wrong because an H200 cannot run it.
  device.gpus = request.gpus;
  device.gpus.devices.clear();
  for (const auto& gpu : request.gpus.devices)
    for (const auto& target : request.targets.targets()) {
      bool native = target.sass &&
                    can_run({KernelImage::Kind::sass, target.cc, target.variant}, gpu.cc) == RunVerdict::native;
      bool jit = target.ptx &&
                 can_run({KernelImage::Kind::ptx, target.cc, target.variant}, gpu.cc) == RunVerdict::ptx_jit;
      if (native || jit) {
        device.gpus.devices.push_back(gpu);
        break;
      }
    }
  // The forced-JIT run proves the PTX of a +PTX target on GPUs it can serve.
  for (const auto& gpu : device.gpus.devices)
    for (const auto& target : request.targets.targets())
      if (target.ptx && can_run({KernelImage::Kind::ptx, target.cc, target.variant}, gpu.cc) == RunVerdict::ptx_jit)
        device.ptx_requested = true;
  if (device.gpus.devices.empty() && !request.gpus.devices.empty()) {
    std::string seen;
    for (const auto& gpu : request.gpus.devices)
      seen += (seen.empty() ? "" : ", ") + gpu.name + " (" + gpu.cc.dotted() + ")";
    device.gpus.unavailable_reason = "no visible GPU is a target of " + request.targets.canonical() + ": " + seen;
  }
  if (device.gpus.devices.size() < request.gpus.devices.size()) {
    // Ordinals of the driver's view, which the user's own CUDA_VISIBLE_DEVICES already narrowed.
    std::vector<int> ordinals;
    for (const auto& gpu : device.gpus.devices) ordinals.push_back(gpu.index);
    const char* user = std::getenv("CUDA_VISIBLE_DEVICES");
    device.visible_devices = visible_devices_for(ordinals, user ? user : "");
  }
  if (request.portable && validation.audit.ran) {
    // The audit proven: the wheel loaded where only what a node has is.
    // On the GPUs the targets serve, as the device checks: an 8.0 wheel's kernel test cannot run on an H200.
    CleanRoomRequest room;
    room.wheel = request.wheel;
    room.python = request.python;
    room.tool_path = request.audit_tool.path;
    room.audit = &validation.audit;
    room.modules = device.packages;
    room.work_dir = request.work_dir;
    room.gpu = !device.gpus.devices.empty();
    room.visible_devices = device.visible_devices;
    room.kernel_test = device.kernel_test;
    room.dependencies = request.test_dependencies;
    validation.clean_room = run_clean_room(room);
  } else {
    validation.clean_room.skipped_reason = request.portable ? "the wheel was not audited"
                                                            : "only with the portable setting (--portable)";
  }
  device.work_dir = request.work_dir;
  device.require_kernel_launch = request.require_kernel_launch;
  device.test_dependencies = request.test_dependencies;
  validation.device = validate_on_device(device);
  // Which GPUs it was proven on, and through which CUDA_VISIBLE_DEVICES.
  validation.device.gpus = device.gpus.devices;
  validation.device.visible_devices = device.visible_devices;
  if (const char* user = std::getenv("CUDA_VISIBLE_DEVICES")) validation.device.user_visible_devices = user;
  return validation;
}

}  // namespace archbuild
