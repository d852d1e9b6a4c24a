#include "cli/inventory_output.h"

#include <algorithm>
#include <iostream>

#include "cli/json_output.h"
#include "core/error.h"
#include "ui/terminal.h"

namespace archbuild {

std::vector<ComputeCapability> parse_device_ccs(const std::vector<std::string>& texts) {
  std::vector<ComputeCapability> devices;
  for (const auto& text : texts) {
    auto cc = ComputeCapability::parse_dotted(text);
    if (!cc) fail_bad_input("--device-cc '" + text + "' is not a compute capability like 9.0");
    devices.push_back(*cc);
  }
  return devices;
}

std::string format_counts(const ArchCounts& counts) {
  std::string out;
  for (const auto& [name, count] : counts) {
    if (!out.empty()) out += "  ";
    out += name + " x" + std::to_string(count);
  }
  return out.empty() ? "none" : out;
}

nlohmann::json to_json(const BinaryInventory& inventory, const std::vector<ComputeCapability>& devices) {
  nlohmann::json out = {{"path", inventory.path}, {"format", inventory.format}};
  if (!inventory.machine.empty()) out["machine"] = inventory.machine;
  if (inventory.error) {
    out["error"] = *inventory.error;
    return out;
  }
  auto counts = [](const ArchCounts& list) {
    nlohmann::json object = nlohmann::json::object();
    for (const auto& [name, count] : list) object[name] = count;
    return object;
  };
  nlohmann::json compressed = nlohmann::json::object();
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& entry : inventory.entries) {
    if (entry.compression != Compression::none)
      compressed[to_string(entry.compression)] = compressed.value(to_string(entry.compression), 0) + 1;
    entries.push_back({{"kind", entry.image.kind == KernelImage::Kind::sass ? "sass" : "ptx"},
                       {"arch", entry.image.name()},
                       {"compression", to_string(entry.compression)},
                       {"section", entry.section},
                       {"loadable", inventory.is_loadable(entry)},
                       {"offset", entry.header_offset},
                       {"size", entry.payload_size}});
  }
  out["containers"] = inventory.containers;
  out["entry_count"] = inventory.entries.size();
  out["sass"] = counts(inventory.sass_counts());
  out["ptx"] = counts(inventory.ptx_counts());
  out["all_sass"] = counts(inventory.all_sass_counts());
  out["all_ptx"] = counts(inventory.all_ptx_counts());
  out["compressed"] = compressed;
  out["entries"] = entries;
  if (!devices.empty() && inventory.has_cuda_code()) {
    nlohmann::json verdicts = nlohmann::json::object();
    for (auto cc : devices) verdicts[cc.dotted()] = to_string(inventory.verdict_for(cc));
    out["verdicts"] = verdicts;
  }
  return out;
}

nlohmann::json to_json(const BinaryKernels& kernels) {
  nlohmann::json by_arch = nlohmann::json::object();
  for (const auto& arch : kernels.archs) {
    auto list = nlohmann::json::array();
    for (const auto& name : arch.names) list.push_back({{"name", name}, {"demangled", demangle(name)}});
    by_arch[arch.arch] = list;
  }
  nlohmann::json out = {{"count", kernels.all_names().size()}, {"by_arch", by_arch}};
  if (kernels.error) out["error"] = *kernels.error;
  return out;
}

namespace {
// Each kernel once, demangled, with the archs that have it when not all do.
void print_kernels(const BinaryKernels& kernels) {
  auto names = kernels.all_names();
  std::string archs;
  for (const auto& arch : kernels.archs) archs += (archs.empty() ? "" : ", ") + arch.arch;
  std::cout << "  kernels: " << names.size() << (archs.empty() ? "" : " (" + archs + ")") << "\n";
  for (const auto& name : names) {
    std::vector<std::string> holding;
    for (const auto& arch : kernels.archs)
      if (std::binary_search(arch.names.begin(), arch.names.end(), name)) holding.push_back(arch.arch);
    std::cout << "    " << demangle(name);
    if (holding.size() != kernels.archs.size()) {
      std::string only;
      for (const auto& arch : holding) only += (only.empty() ? "" : " ") + arch;
      std::cout << "  [" << only << " only]";
    }
    std::cout << "\n";
  }
  if (kernels.error) std::cout << "  kernels of one image could not be read: " << *kernels.error << "\n";
}
}  // namespace

void InventoryPrinter::add(const BinaryInventory& inventory, const BinaryKernels* kernels) {
  if (!inventory.error && !inventory.has_cuda_code() && !all_files_) return;
  for (auto cc : devices_)
    if (!inventory.error && inventory.has_cuda_code() && inventory.verdict_for(cc) == RunVerdict::no_kernel_image)
      without_kernel_image_ = true;
  if (json_) {
    auto file = to_json(inventory, devices_);
    if (kernels && !inventory.error) file["kernels"] = to_json(*kernels);
    files_.push_back(std::move(file));
    return;
  }
  if (inventory.error) {
    std::cerr << "archbuild: error: " << inventory.path << ": " << *inventory.error << "\n";
    return;
  }
  std::cout << paint(inventory.path, Style::bold) << "  " << inventory.format;
  if (!inventory.machine.empty() && inventory.machine != "cuda") std::cout << " (" << inventory.machine << ")";
  if (!inventory.has_cuda_code()) {
    std::cout << ": no CUDA code\n";
    return;
  }
  size_t compressed = 0;
  for (const auto& entry : inventory.entries) compressed += entry.compression != Compression::none;
  std::cout << ": " << inventory.containers << " fatbin" << (inventory.containers == 1 ? "" : "s") << ", "
            << inventory.entries.size() << " entries";
  if (compressed) {
    std::string methods;
    for (const auto& name : inventory.compressions()) methods += (methods.empty() ? "" : "+") + name;
    std::cout << " (" << compressed << " compressed, " << methods << ")";
  }
  std::cout << "\n  SASS  " << format_counts(inventory.sass_counts()) << "\n  PTX   "
            << format_counts(inventory.ptx_counts()) << "\n";
  if (inventory.all_sass_counts() != inventory.sass_counts() || inventory.all_ptx_counts() != inventory.ptx_counts())
    std::cout << "  all fatbins, with the device-link code in __nv_relfatbin that is not loaded:\n    SASS "
              << format_counts(inventory.all_sass_counts()) << "\n    PTX  "
              << format_counts(inventory.all_ptx_counts()) << "\n";
  for (auto cc : devices_) {
    auto verdict = inventory.verdict_for(cc);
    Style style = verdict == RunVerdict::native    ? Style::green
                  : verdict == RunVerdict::ptx_jit ? Style::yellow
                                                   : Style::red;
    std::cout << "  on CC " << cc.dotted() << ": " << paint(to_string(verdict), style) << "\n";
  }
  if (kernels) print_kernels(*kernels);
}

void InventoryPrinter::finish(const WalkStats& stats) {
  if (json_) {
    print_json({{"files", files_},
                {"summary",
                 {{"files_seen", stats.files_seen},
                  {"binaries", stats.binaries},
                  {"with_cuda_code", stats.with_cuda_code},
                  {"unreadable", stats.unreadable}}}});
    return;
  }
  if (stats.binaries != 1 || stats.with_cuda_code == 0)
    std::cout << stats.binaries << " binaries inspected, " << stats.with_cuda_code << " with CUDA code"
              << (stats.unreadable ? ", " + std::to_string(stats.unreadable) + " unreadable" : "") << "\n";
}

}  // namespace archbuild
