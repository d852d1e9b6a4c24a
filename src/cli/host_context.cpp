#include "cli/host_context.h"

#include <iostream>

#include "core/error.h"

namespace archbuild {

std::optional<CudaVersion> parse_cuda_option(const std::string& text) {
  if (text.empty()) return std::nullopt;
  auto version = CudaVersion::parse(text);
  if (!version) fail_bad_input("--cuda '" + text + "' is not a CUDA version like 13.0");
  return CudaVersion{version->major, version->minor};
}

ArchDialect parse_dialect_option(const std::string& text) {
  auto dialect = parse_arch_dialect(text);
  if (!dialect) fail_bad_input("--dialect '" + text + "': expected cmake or extension");
  return *dialect;
}

HostContext HostContext::gather(const std::string& cuda_option) {
  auto requested = parse_cuda_option(cuda_option);
  HostContext context{ToolkitTable::load_default(), find_installed_toolkits(), {}, {}};
  context.toolchain = select_toolchain(context.toolkits, context.table, requested);
  context.gpus = make_gpu_probe()->probe();
  return context;
}

ResolvedArchs HostContext::resolve(const std::string& spec) const {
  ArchResolveInputs inputs;
  inputs.toolkit = &toolchain.facts;
  inputs.table = &table;
  if (!gpus.devices.empty()) inputs.native_ccs = gpus.distinct_ccs();
  inputs.no_gpu_reason = gpus.unavailable_reason;
  return resolve_archs(parse_arch_spec(spec), inputs);
}

nlohmann::json to_json(const ArchList& list) {
  auto targets = nlohmann::json::array();
  for (const auto& target : list.targets()) {
    targets.push_back({{"cc", target.cc.dotted()},
                       {"variant", variant_suffix(target.variant)},
                       {"sass", target.sass},
                       {"ptx", target.ptx},
                       {"canonical", target.canonical()}});
  }
  return targets;
}

nlohmann::json to_json(const GpuReport& report) {
  auto devices = nlohmann::json::array();
  for (const auto& device : report.devices)
    devices.push_back({{"index", device.index},
                       {"name", device.name},
                       {"cc", device.cc.dotted()},
                       {"memory_bytes", device.memory_bytes}});
  nlohmann::json out = {{"devices", devices},
                        {"driver_version", report.driver_version},
                        {"driver_cuda", report.driver_cuda ? report.driver_cuda->str() : ""}};
  if (!report.unavailable_reason.empty()) out["unavailable_reason"] = report.unavailable_reason;
  return out;
}

nlohmann::json to_json(const Toolchain& toolchain) {
  auto ccs = [](const std::vector<ComputeCapability>& list) {
    auto out = nlohmann::json::array();
    for (auto cc : list) out.push_back(cc.dotted());
    return out;
  };
  nlohmann::json out = {{"cuda", toolchain.version().str()},
                        {"installed", toolchain.installed.has_value()},
                        {"min_driver", toolchain.facts.min_driver},
                        {"targets", ccs(toolchain.facts.targets)},
                        {"arch_specific", ccs(toolchain.facts.arch_specific)},
                        {"family_specific", ccs(toolchain.facts.family_specific)},
                        {"notes", toolchain.notes}};
  if (toolchain.installed) {
    out["release"] = toolchain.installed->release;
    out["root"] = toolchain.installed->root.string();
    out["nvcc"] = toolchain.installed->nvcc.string();
    out["found_via"] = toolchain.installed->found_via;
  }
  return out;
}

void print_json(const nlohmann::json& value) { std::cout << value.dump(2) << "\n"; }

}  // namespace archbuild
