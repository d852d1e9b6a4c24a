#include "doctor/diagnosis.h"

#include <algorithm>
#include <filesystem>

#include "core/strings.h"

namespace archbuild {

std::string to_string(PackageVerdict verdict) {
  switch (verdict) {
    case PackageVerdict::ok: return "ok";
    case PackageVerdict::ptx_jit: return "ptx-jit";
    case PackageVerdict::no_kernel_image: return "no-kernel-image";
    case PackageVerdict::driver_too_old: return "driver-too-old";
    case PackageVerdict::not_judged: return "not-judged";
  }
  return "?";
}

bool Diagnosis::has_problem() const {
  for (const auto& package : packages)
    if (package.verdict == PackageVerdict::no_kernel_image || package.verdict == PackageVerdict::driver_too_old)
      return true;
  return std::any_of(findings.begin(), findings.end(), [](const Finding& f) { return f.is_problem; });
}

namespace {

int severity(PackageVerdict verdict) {
  switch (verdict) {
    case PackageVerdict::ok: return 0;
    case PackageVerdict::ptx_jit: return 1;
    case PackageVerdict::driver_too_old: return 2;
    case PackageVerdict::no_kernel_image: return 3;
    case PackageVerdict::not_judged: return 0;  // set only once every file was seen
  }
  return 0;
}

std::string version_without_local(const std::string& version) { return version.substr(0, version.find('+')); }

std::string arch_list_text(const std::vector<ComputeCapability>& ccs) {
  std::vector<std::string> parts;
  for (auto cc : ccs) parts.push_back(cc.dotted());
  return join(parts, ";");
}

std::string file_name(const std::string& path) {
  auto bang = path.rfind('!');
  return std::filesystem::path(bang == std::string::npos ? path : path.substr(bang + 1)).filename().string();
}

// The `archbuild` command that rebuilds `package` for `ccs`, with --cuda when
// the toolkit archbuild would use cannot target one of them.
std::string rebuild_command(const std::string& package, const std::vector<ComputeCapability>& ccs,
                            const DiagnosisInputs& in) {
  std::string command;
  if (package == "torch" || package == "torchvision" || package == "torchaudio")
    command = "archbuild " + package;
  else
    command = "archbuild build <source of " + package + ">";
  auto archs = arch_list_text(ccs);
  command += " --arch " + (archs.find(';') == std::string::npos ? archs : "\"" + archs + "\"");
  if (package == "torch" && in.python->torch_version)
    command += " --ref v" + version_without_local(*in.python->torch_version);
  if (in.table && in.build_cuda) {
    const ToolkitFacts* facts = in.table->newest_at_or_below(*in.build_cuda);
    bool targetable = facts && std::all_of(ccs.begin(), ccs.end(), [&](ComputeCapability cc) {
                        return facts->can_target(cc, ArchVariant::plain);
                      });
    if (!targetable) {
      const ToolkitFacts* newest_that_can = nullptr;
      for (const auto& candidate : in.table->all())
        if (std::all_of(ccs.begin(), ccs.end(),
                        [&](ComputeCapability cc) { return candidate.can_target(cc, ArchVariant::plain); }))
          newest_that_can = &candidate;
      if (newest_that_can) command += " --cuda " + newest_that_can->version.str();
    }
  }
  return command;
}

std::string min_driver_for(const DiagnosisInputs& in, CudaVersion cuda) {
  if (in.table)
    if (const ToolkitFacts* facts = in.table->newest_at_or_below(cuda)) return facts->min_driver;
  return "one that supports CUDA " + cuda.str();
}

PackageDiagnosis diagnose_package(const PackageBinaries& package, const DiagnosisInputs& in,
                                  std::optional<CudaVersion> package_cuda) {
  PackageDiagnosis out{package.name, package.site_dir, PackageVerdict::ok, {}, {}, {}, {}};
  std::vector<ComputeCapability> missing;  // devices some file cannot serve
  bool needs_newer_driver = false;
  bool judged_any = false;
  for (const auto& file : package.files) {
    out.files.push_back(&file);
    if (file.error || !file.has_cuda_code()) continue;
    for (auto cc : in.devices) {
      judged_any = true;
      auto verdict = file.verdict_for(cc);
      PackageVerdict as_package = verdict == RunVerdict::native    ? PackageVerdict::ok
                                  : verdict == RunVerdict::ptx_jit ? PackageVerdict::ptx_jit
                                                                   : PackageVerdict::no_kernel_image;
      bool ptx_too_new = verdict == RunVerdict::ptx_jit && in.driver_cuda && package_cuda &&
                         *in.driver_cuda < *package_cuda;
      if (ptx_too_new) {
        as_package = PackageVerdict::driver_too_old;
        needs_newer_driver = true;
        out.problems.push_back(file_name(file.path) + " has only PTX for CC " + cc.dotted() + ", built by CUDA " +
                               package_cuda->str() + ", which driver CUDA " + in.driver_cuda->str() + " cannot JIT");
      } else if (verdict == RunVerdict::no_kernel_image) {
        if (std::find(missing.begin(), missing.end(), cc) == missing.end()) missing.push_back(cc);
        auto sass = file.sass_counts();
        auto ptx = file.ptx_counts();
        std::string has;
        for (const auto& [name, count] : sass) has += (has.empty() ? "" : " ") + name;
        for (const auto& [name, count] : ptx) has += (has.empty() ? "" : " ") + name;
        std::string needs = is_tegra_only(cc)
                                ? "sm_" + std::to_string(cc.number()) + " exactly (a Tegra part)"
                                : "sm_" + std::to_string(cc.major) + "x with x <= " + std::to_string(cc.minor);
        out.problems.push_back(file_name(file.path) + " has no kernel image for CC " + cc.dotted() + " (it has " +
                               (has.empty() ? std::string("nothing") : has) + "; CC " + cc.dotted() + " needs " +
                               needs + ", or PTX <= compute_" + std::to_string(cc.number()) + ")");
      } else if (verdict == RunVerdict::ptx_jit) {
        out.problems.push_back(file_name(file.path) + " runs on CC " + cc.dotted() +
                               " only by JIT-compiling PTX (slow first launch)");
      }
      if (severity(as_package) > severity(out.verdict)) out.verdict = as_package;
    }
  }
  if (!judged_any) {
    out.verdict = PackageVerdict::not_judged;
    out.not_judged_reason = in.devices.empty() ? "no device to judge it for" : "none of its CUDA code could be read";
    return out;
  }
  std::sort(missing.begin(), missing.end());
  if (!missing.empty()) out.fixes.push_back(rebuild_command(package.name, missing, in));
  if (needs_newer_driver)
    out.fixes.push_back("install NVIDIA driver " + min_driver_for(in, *package_cuda) + " or newer (CUDA " +
                        package_cuda->str() + ")");
  if (out.verdict == PackageVerdict::ptx_jit)
    out.fixes.push_back("for native code: " + rebuild_command(package.name, in.devices, in));
  return out;
}

}  // namespace

Diagnosis diagnose(const DiagnosisInputs& in) {
  Diagnosis diagnosis;
  const PythonEnvironment& python = *in.python;
  std::optional<CudaVersion> torch_cuda;
  if (python.torch_cuda) torch_cuda = CudaVersion::parse(*python.torch_cuda);

  if (!python.torch_dir) diagnosis.findings.push_back({false, python.interpreter + " has no torch on sys.path", ""});
  if (python.torch_dirs.size() > 1) {
    std::string listed;
    for (const auto& dir : python.torch_dirs)
      listed += "\n    " + dir + (python.torch_dir && dir == *python.torch_dir ? "  (imported)" : "  (shadowed)");
    diagnosis.findings.push_back({false,
                                  std::to_string(python.torch_dirs.size()) + " torch installs on sys.path:" + listed,
                                  "uninstall the ones not imported, or use one virtual environment per torch"});
  }
  if (python.torch_dir && !python.import_ok)
    diagnosis.findings.push_back(
        {false, "import torch fails: " + python.import_error, "the libraries were inspected without importing torch"});
  if (python.torch_dir && !torch_cuda)
    diagnosis.findings.push_back({false, "this torch is a CPU-only build (torch.version.cuda is None)",
                                  "install a CUDA build, or: " + rebuild_command("torch", in.devices, in)});

  if (torch_cuda && in.driver_cuda && in.driver_cuda->major < torch_cuda->major)
    diagnosis.findings.push_back({true,
                                  "the driver supports CUDA " + in.driver_cuda->str() +
                                      " but torch was built with CUDA " + torch_cuda->str() +
                                      ": torch cannot initialise CUDA",
                                  "install NVIDIA driver " + min_driver_for(in, *torch_cuda) + " or newer"});
  if (torch_cuda && in.nvcc_on_path && in.nvcc_on_path->major != torch_cuda->major)
    diagnosis.findings.push_back(
        {false,
         "nvcc on PATH is CUDA " + in.nvcc_on_path->str() + " but torch uses CUDA " + torch_cuda->str() +
             ": torch.utils.cpp_extension refuses to build extensions "
             "across CUDA majors",
         "put a CUDA " + std::to_string(torch_cuda->major) + ".x nvcc first on PATH (CUDA_HOME)"});
  else if (torch_cuda && in.nvcc_on_path && *in.nvcc_on_path != *torch_cuda)
    diagnosis.findings.push_back({false,
                                  "nvcc on PATH is CUDA " + in.nvcc_on_path->str() + ", torch uses CUDA " +
                                      torch_cuda->str() + " (same major: extensions build, with a warning)",
                                  ""});

  for (const auto& package : *in.packages) {
    for (const auto& file : package.files)
      if (file.error) diagnosis.findings.push_back({false, "cannot read " + file.path + ": " + *file.error, ""});
    bool vendor = package.name.rfind("nvidia/", 0) == 0 || package.name == "nvidia";
    auto result = diagnose_package(package, in, vendor ? std::nullopt : torch_cuda);
    if (vendor) {
      // What its fatbins alone say stays in each file's inventory.
      result.verdict = PackageVerdict::not_judged;
      result.not_judged_reason = "NVIDIA library: may load kernels at run time; fatbins shown, not judged";
      result.problems.clear();
      result.fixes.clear();
    }
    diagnosis.packages.push_back(std::move(result));
  }
  return diagnosis;
}

}  // namespace archbuild
