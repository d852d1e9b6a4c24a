#include <cstdio>
#include <iostream>

#include "cli/command.h"
#include "cli/common_options.h"
#include "cli/json_output.h"
#include "core/error.h"
#include "core/strings.h"
#include "core/system_info.h"
#include "toolchain/host_compiler.h"
#include "ui/terminal.h"

namespace archbuild {

namespace {

std::string cc_list(const std::vector<ComputeCapability>& ccs) {
  std::vector<std::string> parts;
  for (auto cc : ccs) parts.push_back(cc.dotted());
  return join(parts, " ");
}

struct CompilerVerdict {
  std::optional<HostCompiler> compiler;
  std::string error;
};

CompilerVerdict host_compiler_for(const Toolchain& toolchain) {
  try {
    return {detect_host_compiler(toolchain), ""};
  } catch (const UserError& e) {
    return {std::nullopt, e.what()};
  }
}

}  // namespace

Command detect_command() {
  return {"detect", "Show GPUs, driver, CUDA toolkits and host compiler", [](CLI::App& app) {
            auto json = std::make_shared<bool>(false);
            add_json_flag(app, *json, "Print a JSON object");
            return [json]() {
              auto table = ToolkitTable::load_default();
              auto toolkits = find_installed_toolkits();
              auto gpus = make_gpu_probe()->probe();

              nlohmann::json out = {{"gpus", to_json(gpus)}, {"toolkits", nlohmann::json::array()}};
              std::vector<std::string> toolkit_lines;
              for (size_t i = 0; i < toolkits.size(); ++i) {
                auto chain = toolchain_from_installed(toolkits[i], table);
                auto verdict = host_compiler_for(chain);
                auto entry = to_json(chain);
                if (verdict.compiler) {
                  entry["host_compiler"] = {{"path", verdict.compiler->path.string()},
                                            {"kind", verdict.compiler->kind},
                                            {"version", verdict.compiler->version},
                                            {"max_major", verdict.compiler->max_major.value_or(0)},
                                            {"accepted", verdict.compiler->accepted()}};
                } else {
                  entry["host_compiler"] = {{"error", verdict.error}};
                }
                out["toolkits"].push_back(entry);
                std::string line = std::string(i == 0 ? "  * " : "    ") + "CUDA " + toolkits[i].release + "  " +
                                   toolkits[i].root.string() + "  (" + join(toolkits[i].found_via, ", ") +
                                   ")\n      targets " + cc_list(chain.facts.targets);
                if (verdict.compiler)
                  line += "\n      host " + verdict.compiler->kind + " " + verdict.compiler->version + " (" +
                          verdict.compiler->path.string() +
                          "): " + (verdict.compiler->accepted() ? "accepted" : "REJECTED") +
                          (verdict.compiler->max_major
                               ? " (nvcc accepts <= " + std::to_string(*verdict.compiler->max_major) + ")"
                               : "");
                else
                  line += "\n      host compiler: " + verdict.error;
                for (const auto& note : chain.notes) line += "\n      note: " + note;
                toolkit_lines.push_back(line);
              }
              out["machine"] = host_machine();
              out["cpu_count"] = cpu_count();
              out["available_memory_bytes"] = available_memory_bytes().value_or(0);

              if (*json) {
                print_json(out);
              } else {
                std::cout << paint("GPUs", Style::bold) << "\n";
                if (gpus.devices.empty())
                  std::cout << "  " << paint("none", Style::yellow) << ": " << gpus.unavailable_reason << "\n";
                for (const auto& device : gpus.devices)
                  std::cout << "  " << device.index << "  " << device.name << "  CC " << device.cc.dotted() << "  "
                            << format_bytes(device.memory_bytes) << "\n";
                std::cout << paint("driver", Style::bold) << "\n  ";
                if (gpus.driver_cuda)
                  std::cout << (gpus.driver_version.empty() ? "version unknown" : gpus.driver_version)
                            << ", supports CUDA " << gpus.driver_cuda->str() << "\n";
                else
                  std::cout << "not loaded\n";
                std::cout << paint("CUDA toolkits", Style::bold) << " (* = the one used by default)\n";
                if (toolkits.empty()) std::cout << "  none found\n";
                for (const auto& line : toolkit_lines) std::cout << line << "\n";
                std::cout << paint("host", Style::bold) << "\n  " << host_machine() << ", " << cpu_count() << " cores, "
                          << format_bytes(available_memory_bytes().value_or(0)) << " memory available\n";
              }
              if (gpus.devices.empty()) {
                std::cerr << "archbuild: no usable GPU: " << gpus.unavailable_reason << "\n";
                return ExitCode::environment;
              }
              return ExitCode::success;
            };
          }};
}

}  // namespace archbuild
