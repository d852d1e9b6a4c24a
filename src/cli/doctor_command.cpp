#include <iostream>

#include "arch/arch_spec.h"
#include "cli/command.h"
#include "cli/common_options.h"
#include "cli/inventory_output.h"
#include "cli/json_output.h"
#include "config/setting_names.h"
#include "config/settings.h"
#include "core/cache_layout.h"
#include "core/error.h"
#include "core/log.h"
#include "core/strings.h"
#include "core/system_info.h"
#include "doctor/cached_builds.h"
#include "doctor/compat_matrix.h"
#include "doctor/diagnosis.h"
#include "doctor/diagnosis_output.h"
#include "doctor/doctor_inputs.h"
#include "doctor/doctor_verdict.h"
#include "toolchain/installed_toolkit.h"
#include "ui/terminal.h"

namespace archbuild {

namespace {

struct DoctorOptions {
  std::vector<std::string> pythons, device_ccs;
  std::string driver;  // --driver VERSION: judge for this driver instead of the loaded one
  std::string cache_dir;
  std::string machine;  // --machine: whose official builds; default the interpreter's (the matrix: this host's)
  bool json = false;
  bool matrix = false;
};

// The cache doctor reads its builds from; a bad setting is no reason to stop a diagnosis.
std::vector<CachedTorch> cached_builds_of(const std::string& cache_dir) {
  try {
    return cached_torch_builds(Settings::load({{setting_name::cache_dir, cache_dir}}).cache_dir());
  } catch (const UserError& e) {
    log::verbose("doctor: the cache's builds are left out: {}", e.what());
    return {};
  }
}

nlohmann::json package_json_with_files(const PackageDiagnosis& package, const std::vector<ComputeCapability>& devices) {
  auto files = nlohmann::json::array();
  for (const auto* file : package.files) files.push_back(to_json(*file, devices));
  auto out = package_json(package);
  out["files"] = files;
  return out;
}

void print_environment(const PythonEnvironment& python, const Diagnosis& diagnosis) {
  std::cout << paint(python.interpreter, Style::bold) << "  " << python.executable << " (Python "
            << python.python_version << ")\n";
  if (python.torch_dir) {
    std::cout << "  torch       " << python.torch_version.value_or("unknown version") << " (CUDA "
              << python.torch_cuda.value_or("none") << ") at " << *python.torch_dir << "\n";
    std::cout << "  import      "
              << (python.import_ok ? paint("ok", Style::green)
                                   : paint("FAILED", Style::red) + ": " + python.import_error)
              << "\n";
    if (python.import_ok)
      std::cout << "  arch list   "
                << (python.arch_list.empty() ? "(empty: CUDA not available to torch)" : join(python.arch_list, " "))
                << "  (torch.cuda.get_arch_list)\n";
  } else {
    std::cout << "  torch       not found on sys.path\n";
  }
  if (diagnosis.packages.empty()) std::cout << "  no package with CUDA code\n";
  for (const auto& package : diagnosis.packages) std::cout << package_text(package);
  for (const auto& finding : diagnosis.findings) {
    std::cout << "  " << (finding.is_problem ? paint("problem", Style::red) : paint("warning", Style::yellow)) << ": "
              << finding.message << "\n";
    if (!finding.fix.empty()) std::cout << "      fix: " << finding.fix << "\n";
  }
}

// One `archbuild doctor`: the machine's facts, the devices to diagnose
// against, then the matrix or each interpreter's diagnosis; each a step.
class DoctorRun {
 public:
  explicit DoctorRun(const DoctorOptions& options) : options_(options) {}

  ExitCode run() {
    take_devices();
    take_driver();
    report_ = {{"gpus", to_json(gpus_)}, {"interpreters", nlohmann::json::array()}};
    std::vector<std::string> device_texts;
    for (auto cc : devices_.ccs) device_texts.push_back(cc.dotted());
    report_["device_ccs"] = device_texts;
    if (!options_.json) print_devices(device_texts);
    if (devices_.ccs.empty()) {
      if (options_.json) print_json(report_);
      fail_environment("no GPU to diagnose against (" + gpus_.unavailable_reason +
                       "); pass --device-cc M.N for the GPU that fails");
    }
    if (options_.matrix) return print_matrix();
    const auto pythons = options_.pythons.empty() ? std::vector<std::string>{"python3"} : options_.pythons;
    for (const auto& interpreter : pythons) diagnose_interpreter(interpreter);
    return verdict(pythons);
  }

 private:
  void take_devices() { devices_ = devices_to_diagnose(parse_device_ccs(options_.device_ccs), table_, gpus_); }

  void take_driver() {
    if (options_.driver.empty()) return;
    const auto driver_cuda = cuda_of_driver_option(options_.driver, table_);
    gpus_.driver_version = options_.driver;
    gpus_.driver_cuda = driver_cuda;
  }

  // The devices and driver as taken, with the tables and the cache's builds.
  DoctorFacts facts() const {
    DoctorFacts facts{&table_, &official_, &cached_, devices_.ccs, gpus_.driver_cuda, std::nullopt, options_.machine};
    if (!toolkits_.empty()) facts.build_cuda = toolkits_.front().version;
    return facts;
  }

  void print_devices(const std::vector<std::string>& device_texts) const {
    std::cout << paint("devices", Style::bold) << "     ";
    if (devices_.ccs.empty()) std::cout << "none (" << gpus_.unavailable_reason << ")\n";
    for (const auto& gpu : gpus_.devices)
      if (devices_.from_gpus) std::cout << "CC " << gpu.cc.dotted() << " (" << gpu.name << ")  ";
    if (!devices_.from_gpus) std::cout << "CC " << join(device_texts, ", CC ") << " (--device-cc)";
    std::cout << "\n"
              << paint("driver", Style::bold) << "      "
              << (gpus_.driver_cuda ? (gpus_.driver_version.empty() ? "" : gpus_.driver_version + ", ") +
                                          "supports CUDA " + gpus_.driver_cuda->str()
                                    : std::string("not loaded"))
              << "\n";
  }

  ExitCode print_matrix() {
    const auto matrix = doctor_matrix(facts());
    if (options_.json) {
      report_["matrix"] = matrix_json(matrix);
      print_json(report_);
    } else {
      std::cout << "\n" << matrix_text(matrix);
    }
    return ExitCode::success;
  }

  void diagnose_interpreter(const std::string& interpreter) {
    PythonEnvironment python;
    try {
      python = probe_python(interpreter);
    } catch (const UserError& e) {
      std::cerr << "archbuild: " << e.what() << "\n";
      report_["interpreters"].push_back({{"interpreter", interpreter}, {"error", e.what()}});
      return;
    }
    const auto packages = scan_packages(python.package_dirs);
    OfficialBuildTable official_here;
    const auto diagnosis = diagnose(diagnosis_inputs(facts(), python, packages, nvcc_on_path_version(), official_here));
    tally_.add(python, diagnosis);
    report_["interpreters"].push_back(interpreter_json(interpreter, python, diagnosis));
    if (!options_.json) print_environment(python, diagnosis);
  }

  nlohmann::json interpreter_json(const std::string& interpreter, const PythonEnvironment& python,
                                  const Diagnosis& diagnosis) const {
    auto package_list = nlohmann::json::array();
    for (const auto& package : diagnosis.packages)
      package_list.push_back(package_json_with_files(package, devices_.ccs));
    auto findings = nlohmann::json::array();
    for (const auto& finding : diagnosis.findings)
      findings.push_back({{"problem", finding.is_problem}, {"message", finding.message}, {"fix", finding.fix}});
    return {{"interpreter", interpreter},
            {"executable", python.executable},
            {"python_version", python.python_version},
            {"machine", python.machine},
            {"torch_dir", python.torch_dir.value_or("")},
            {"torch_dirs", python.torch_dirs},
            {"torch_version", python.torch_version.value_or("")},
            {"torch_cuda", python.torch_cuda.value_or("")},
            {"import_ok", python.import_ok},
            {"import_error", python.import_error},
            {"arch_list", python.arch_list},
            {"packages", package_list},
            {"findings", findings},
            {"problem", diagnosis.has_problem()}};
  }

  ExitCode verdict(const std::vector<std::string>& pythons) {
    const auto verdict = tally_.verdict();
    report_["verdict"] = to_string(verdict);
    if (options_.json)
      print_json(report_);
    else if (verdict == DoctorVerdict::nothing_to_diagnose)
      std::cout << "nothing to diagnose: no torch found in " << join(pythons, ", ") << "\n";
    else
      std::cout << (verdict == DoctorVerdict::problem ? paint("verdict: problem found (see fixes above)", Style::red)
                                                      : paint("verdict: ok", Style::green))
                << "\n";
    return exit_code_of(verdict);
  }

  const DoctorOptions& options_;
  ToolkitTable table_ = ToolkitTable::load_default();
  OfficialBuildTable official_ = OfficialBuildTable::load_default();
  std::vector<CachedTorch> cached_ = cached_builds_of(options_.cache_dir);
  std::vector<InstalledToolkit> toolkits_ = find_installed_toolkits();
  GpuReport gpus_ = make_gpu_probe()->probe();
  DoctorDevices devices_;
  nlohmann::json report_;
  DoctorTally tally_;
};

ExitCode run_doctor(const DoctorOptions& options) { return DoctorRun(options).run(); }

}  // namespace

Command doctor_command() {
  return {"doctor", "Explain a \"no kernel image\" failure and print the fix", [](CLI::App& app) {
            auto options = std::make_shared<DoctorOptions>();
            app.add_option("--python", options->pythons, "Interpreter to diagnose (repeatable; default python3)");
            app.add_option("--device-cc", options->device_ccs,
                           "Diagnose for a device of this CC instead of the visible GPUs (repeatable)");
            app.add_option("--driver", options->driver,
                           "Judge for an NVIDIA driver of this version (535.104.05) instead of the loaded one: a "
                           "fleet's driver");
            app.add_flag("--matrix", options->matrix,
                         "Print which official torch builds (and the cache's) run on each device: native, ptx-jit, "
                         "no-kernel-image, driver-too-old");
            app.add_option("--cache-dir", options->cache_dir, "archbuild's cache, for the builds it already holds");
            app.add_option("--machine", options->machine,
                           "Whose official builds: x86_64 or aarch64 (default: each interpreter's CPU; for "
                           "--matrix, this host's)")
                ->check(CLI::IsMember(std::vector<std::string>(std::begin(kKnownMachines), std::end(kKnownMachines))));
            add_json_flag(app, options->json, "Print a JSON object");
            return [options]() { return run_doctor(*options); };
          }};
}

}  // namespace archbuild
