#include "doctor/diagnosis.h"

#include <algorithm>
#include <filesystem>

#include "core/strings.h"
#include "recipe/repository_url.h"
#include "source/pep440_version.h"

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

std::string arch_flag(const std::vector<ComputeCapability>& ccs) {
  auto archs = arch_list_text(ccs);
  return " --arch " + (archs.find(';') == std::string::npos ? archs : "\"" + archs + "\"");
}

// " --cuda X.Y" when the toolkit archbuild would use cannot target one of
// `ccs`: the newest toolkit that can; "" otherwise.
std::string cuda_flag(const std::vector<ComputeCapability>& ccs, const DiagnosisInputs& in) {
  if (!in.table || !in.build_cuda) return "";
  auto can_target_all = [&](const ToolkitFacts& facts) {
    return std::all_of(ccs.begin(), ccs.end(),
                       [&](ComputeCapability cc) { return facts.can_target(cc, ArchVariant::plain); });
  };
  const ToolkitFacts* facts = in.table->newest_at_or_below(*in.build_cuda);
  if (facts && can_target_all(*facts)) return "";
  const ToolkitFacts* newest_that_can = nullptr;
  for (const auto& candidate : in.table->all())
    if (can_target_all(candidate)) newest_that_can = &candidate;
  return newest_that_can ? " --cuda " + newest_that_can->version.str() : "";
}

std::string arch_arguments(const std::vector<ComputeCapability>& ccs, const DiagnosisInputs& in) {
  return arch_flag(ccs) + cuda_flag(ccs, in);
}

// The `archbuild` command that rebuilds torch or a companion for `ccs`.
std::string rebuild_command(const std::string& package, const std::vector<ComputeCapability>& ccs,
                            const DiagnosisInputs& in) {
  std::string command = "archbuild " + package + arch_flag(ccs);
  if (package == "torch" && in.python->torch_version)
    command += " --ref v" + version_without_local(*in.python->torch_version);
  return command + cuda_flag(ccs, in);
}

bool is_torch_family(const std::string& package) {
  return package == "torch" || package == "torchvision" || package == "torchaudio";
}

std::string major_minor(const std::string& version) {
  auto parts = split_any(version, ".");
  return parts.size() >= 2 ? parts[0] + "." + parts[1] : version;
}

// The official torch build, PTX JIT, a cached build, then the source build.
std::vector<Fix> torch_ladder(const std::vector<ComputeCapability>& devices, const DiagnosisInputs& in) {
  TorchFixInputs ladder;
  ladder.devices = devices;
  ladder.driver_cuda = in.driver_cuda;
  ladder.python_version = major_minor(in.python->python_version);
  for (const auto& package : *in.packages)
    if (package.name == "torchvision" || package.name == "torchaudio") ladder.companions.push_back(package.name);
  ladder.official = in.official;
  ladder.cached = in.cached_torch;
  ladder.source_command = rebuild_command("torch", devices, in);
  return torch_fixes(ladder);
}

// Another package: its build for another CUDA major where the project
// publishes one per major and that CUDA can target the devices while its own
// cannot; else a source build of the exact release, never a placeholder.
std::vector<Fix> package_ladder(const std::string& package, const std::vector<ComputeCapability>& devices,
                                const DiagnosisInputs& in) {
  std::vector<Fix> fixes;
  if (is_torch_family(package)) {
    fixes.push_back({Fix::Kind::source_build,
                     "build " + package + " for exactly these GPUs, against your torch",
                     {rebuild_command(package, devices, in)}});
    return fixes;
  }
  auto found = in.distributions.find(package);
  if (found == in.distributions.end()) {
    fixes.push_back({Fix::Kind::source_build,
                     "none: no *.dist-info in its site dir names " + package +
                         ", so archbuild cannot tell which project and release it is; build it from its source "
                         "with `archbuild build DIR" +
                         arch_arguments(devices, in) + "`",
                     {}});
    return fixes;
  }
  const auto& distribution = found->second;
  // METADATA is anyone's text: a command is printed only for a real project name and version
  if (!valid_project_name(distribution.name) || !is_pep440_version(distribution.version)) {
    fixes.push_back({Fix::Kind::source_build,
                     "none: the *.dist-info of " + package +
                         " names no valid project and version (Name and Version of its METADATA), so archbuild "
                         "prints no command for it",
                     {}});
    return fixes;
  }
  if (is_torch_family(distribution.name))  // torchvision.libs (auditwheel's) is torchvision's
    return package_ladder(distribution.name, devices, in);
  auto can_target_all = [&](const ToolkitFacts& facts) {
    return std::all_of(devices.begin(), devices.end(),
                       [&](ComputeCapability cc) { return facts.can_target(cc, ArchVariant::plain); });
  };
  if (auto own_major = cuda_major_of_name(distribution.name); own_major && in.table) {
    const ToolkitFacts* own = nullptr;
    for (const auto& facts : in.table->all())
      if (facts.version.major == *own_major) own = &facts;  // the newest of that major
    if (own && !can_target_all(*own)) {
      const ToolkitFacts* other = nullptr;
      for (const auto& facts : in.table->all())
        if (facts.version.major != *own_major && can_target_all(facts)) other = &facts;  // the newest that can
      if (other)
        if (auto name = cuda_variant_name(distribution.name, other->version.major))
          fixes.push_back({Fix::Kind::official_variant,
                           distribution.name + " is built with CUDA " + std::to_string(*own_major) +
                               ", which cannot target " + arch_list_text(devices) + "; CUDA " + other->version.str() +
                               " can, and the project publishes one build per CUDA major as " + *name +
                               " (if it still publishes that one)",
                           {"pip uninstall -y " + distribution.name + " && pip install " + *name}});
    }
  }
  std::string why = "build " + distribution.name + " " + distribution.version +
                    " from its sdist for exactly these GPUs";
  std::vector<std::string> lines = {"archbuild build pypi:" + distribution.name + "==" + distribution.version +
                                    arch_arguments(devices, in)};
  if (!distribution.repository.empty()) {
    why += " (or from " + distribution.repository + " at its release tag)";
    lines.push_back("archbuild build " + distribution.repository + arch_arguments(devices, in));
  }
  fixes.push_back({Fix::Kind::source_build, why, lines});
  return fixes;
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
  // The whole machine's devices for torch: an official build must fit every one.
  if (!missing.empty() || out.verdict == PackageVerdict::ptx_jit)
    out.fixes = package.name == "torch" ? torch_ladder(in.devices, in)
                                        : package_ladder(package.name, missing.empty() ? in.devices : missing, in);
  if (needs_newer_driver)
    out.fixes.insert(out.fixes.begin(),
                     Fix{Fix::Kind::driver,
                         "its PTX was built by CUDA " + package_cuda->str() + ", newer than this driver can JIT",
                         {"install NVIDIA driver " + min_driver_for(in, *package_cuda) + " or newer (CUDA " +
                          package_cuda->str() + ")"}});
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
                                  "install a CUDA build (`archbuild doctor --matrix` lists the official ones), or: " +
                                      rebuild_command("torch", in.devices, in)});

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
