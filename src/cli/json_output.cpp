#include "cli/json_output.h"

#include <iostream>

#include "core/json_text.h"

namespace archbuild {

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

void print_json(const nlohmann::json& value) { std::cout << json_text(value) << "\n"; }

}  // namespace archbuild
