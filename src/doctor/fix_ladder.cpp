#include "doctor/fix_ladder.h"

#include <algorithm>
#include <regex>

#include "core/strings.h"

namespace archbuild {

std::string to_string(Fix::Kind kind) {
  switch (kind) {
    case Fix::Kind::official_build: return "official-build";
    case Fix::Kind::ptx_jit: return "ptx-jit";
    case Fix::Kind::cached_build: return "cached-build";
    case Fix::Kind::official_variant: return "official-variant";
    case Fix::Kind::source_build: return "source-build";
    case Fix::Kind::driver: return "driver";
  }
  return "?";
}

namespace {

std::string devices_text(const std::vector<ComputeCapability>& devices) {
  std::vector<std::string> parts;
  for (auto cc : devices) parts.push_back("CC " + cc.dotted());
  return join(parts, ", ");
}

// "sm_60 for CC 6.1, sm_90 for CC 9.0": which image serves each device.
std::string serving_images(const std::vector<ArchTarget>& targets, const std::vector<ComputeCapability>& devices,
                           bool ptx) {
  std::vector<std::string> parts;
  for (auto device : devices) {
    std::string best;
    for (const auto& target : targets) {
      KernelImage image{ptx ? KernelImage::Kind::ptx : KernelImage::Kind::sass, target.cc, target.variant};
      if ((ptx ? target.ptx : target.sass) && can_run(image, device) != RunVerdict::no_kernel_image)
        best = image.name();  // targets are sorted: the last that runs is the closest
    }
    if (!best.empty()) parts.push_back(best + " for CC " + device.dotted());
  }
  return join(parts, ", ");
}

bool all_native(const std::vector<ArchTarget>& targets, const std::vector<ComputeCapability>& devices) {
  return std::all_of(devices.begin(), devices.end(),
                     [&](ComputeCapability cc) { return best_verdict(targets, cc) == RunVerdict::native; });
}

bool all_run_with_ptx(const OfficialBuild& build, const std::vector<ComputeCapability>& devices) {
  return std::all_of(devices.begin(), devices.end(),
                     [&](ComputeCapability cc) { return build.verdict_for(cc) != RunVerdict::no_kernel_image; });
}

std::string label(const OfficialBuild& build) { return "torch " + build.torch + "+" + build.variant(); }

}  // namespace

std::vector<std::string> official_install_lines(const OfficialBuild& build,
                                                const std::vector<std::string>& companions) {
  std::string packages = "torch==" + build.torch;
  for (const auto& companion : companions) {
    if (companion == "torchvision" && !build.torchvision.empty()) packages += " torchvision==" + build.torchvision;
    if (companion == "torchaudio" && !build.torchaudio.empty()) packages += " torchaudio==" + build.torchaudio;
  }
  return {"pip install " + packages + " --index-url " + build.index_url(),
          "uv pip install " + packages + " --torch-backend=" + build.variant()};
}

std::vector<Fix> torch_fixes(const TorchFixInputs& in) {
  std::vector<Fix> fixes;
  const auto& devices = in.devices;
  auto python_fits = [&](const OfficialBuild& build) {
    return in.python_version.empty() || build.has_python(in.python_version);
  };
  auto driver_fits = [&](const OfficialBuild& build) {
    return !in.driver_cuda || build.driver_runs_sass(*in.driver_cuda);
  };

  const OfficialBuild* native = nullptr;
  const OfficialBuild* native_but_driver = nullptr;  // runs natively, but not with this driver
  const OfficialBuild* native_but_python = nullptr;  // runs natively, but has no wheel for this Python
  if (in.official)
    for (const auto& build : in.official->all()) {
      if (!all_native(build.targets, devices)) continue;
      if (!python_fits(build)) {
        if (!native_but_python) native_but_python = &build;
      } else if (!driver_fits(build)) {
        if (!native_but_driver) native_but_driver = &build;
      } else {
        native = &build;
        break;
      }
    }
  if (native) {
    std::vector<std::string> missing_companions;
    for (const auto& companion : in.companions)
      if ((companion == "torchvision" && native->torchvision.empty()) ||
          (companion == "torchaudio" && native->torchaudio.empty()))
        missing_companions.push_back(companion);
    std::string why = label(*native) + " (the newest official build that fits) holds " +
                      serving_images(native->targets, devices, false) + ": installs in minutes" +
                      (in.driver_cuda
                           ? ", and this driver (CUDA " + in.driver_cuda->str() + ") runs CUDA " + native->cuda.str()
                           : "") +
                      (missing_companions.empty() ? ""
                                                  : "; no " + join(missing_companions, " or ") +
                                                        " release is paired with it in the table: "
                                                        "take the one its index lists");
    fixes.push_back({Fix::Kind::official_build, why, official_install_lines(*native, in.companions)});
  } else {
    std::string why = "none: no official torch build in the table runs natively on " + devices_text(devices);
    if (native_but_driver)
      why += " with this driver (" + label(*native_but_driver) + " would, with a driver for CUDA " +
             native_but_driver->cuda.str() + " or newer)";
    else if (native_but_python)
      why += " for Python " + in.python_version + " (" + label(*native_but_python) + " would, on Python " +
             join(native_but_python->python, ", ") + ")";
    fixes.push_back({Fix::Kind::official_build, why, {}});
  }

  if (!native && in.official && in.driver_cuda)
    for (const auto& build : in.official->all()) {
      // PTX needs the driver's own CUDA to be at least the wheel's (no minor-version compatibility for JIT)
      if (!python_fits(build) || !build.driver_jits_ptx(*in.driver_cuda) || !all_run_with_ptx(build, devices)) continue;
      fixes.push_back({Fix::Kind::ptx_jit,
                       label(build) + " runs here only by JIT-compiling its PTX (" +
                           serving_images(build.targets, devices, true) +
                           "): the driver compiles each kernel at its first launch (minutes on first use for "
                           "torch's thousands of kernels, cached in ~/.nv/ComputeCache; set CUDA_CACHE_MAXSIZE="
                           "4294967296 so the cache holds them), a stopgap until a native build",
                       official_install_lines(build, in.companions)});
      break;
    }

  for (const auto& cached : in.cached)
    if (all_native(cached.targets, devices)) {
      fixes.push_back({Fix::Kind::cached_build,
                       "torch " + cached.version + " is in archbuild's cache and holds " +
                           serving_images(cached.targets, devices, false),
                       {cached.install_line}});
      break;
    }

  if (!in.source_command.empty())
    fixes.push_back({Fix::Kind::source_build,
                     "build torch from source for exactly these GPUs: hours (docs/TORCH_RELEASE.md \"Build time\")",
                     {in.source_command}});
  if (native_but_driver && !native)
    fixes.push_back(
        {Fix::Kind::driver,
         "a driver for CUDA " + native_but_driver->cuda.str() + " lets " + label(*native_but_driver) + " run natively",
         {"install an NVIDIA driver that supports CUDA " + native_but_driver->cuda.str() + " or newer"}});
  return fixes;
}

namespace {
// NAME-cudaNNx, NAME-cudaNN-plugin, NAME-cuNN: the conventions of projects
// that publish one distribution per CUDA major.
const std::regex& variant_pattern() {
  static const std::regex pattern(R"(^(.*-(?:cuda|cu))(\d{2})((?:x|-.*)?)$)");
  return pattern;
}
}  // namespace

std::optional<int> cuda_major_of_name(const std::string& distribution) {
  std::smatch match;
  if (distribution.size() > 200 || !std::regex_match(distribution, match, variant_pattern())) return std::nullopt;
  return std::stoi(match[2].str());
}

std::optional<std::string> cuda_variant_name(const std::string& distribution, int cuda_major) {
  std::smatch match;
  if (distribution.size() > 200 || !std::regex_match(distribution, match, variant_pattern())) return std::nullopt;
  return match[1].str() + std::to_string(cuda_major) + match[3].str();
}

}  // namespace archbuild
