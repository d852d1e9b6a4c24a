#include <iostream>

#include "cli/command.h"
#include "cli/common_options.h"
#include "cli/json_output.h"
#include "core/error.h"

namespace archbuild {

Command arch_command() {
  return {"arch", "Resolve an arch spec to TORCH_CUDA_ARCH_LIST", [](CLI::App& app) {
            struct Options {
              std::string spec, cuda, dialect = "cmake", torch;
              bool json = false;
            };
            auto options = std::make_shared<Options>();
            app.add_option("spec", options->spec,
                           "native | all | official | items such as 8.6, sm_90a, 12.0+PTX, Hopper")
                ->required();
            app.add_option("--cuda", options->cuda, "CUDA version to resolve for (default: installed)");
            app.add_option("--dialect", options->dialect, "cmake (PyTorch) or extension (cpp_extension)")
                ->check(CLI::IsMember({"cmake", "extension"}));
            app.add_option("--torch", options->torch,
                           "With --dialect extension: the torch release whose cpp_extension reads the list "
                           "(its names and accepted archs; default: the newest known)");
            add_json_flag(app, options->json, "Print a JSON object");
            return [options]() {
              auto dialect = parse_dialect_option(options->dialect);
              auto context = HostContext::gather(options->cuda);
              std::optional<ArchNames> names;
              if (dialect == ArchDialect::extension)
                names = CppExtensionArchTable::load_default().for_torch(options->torch);
              else if (!options->torch.empty())
                fail_bad_input("--torch goes with --dialect extension (cpp_extension's rules differ per release)");
              auto resolved = context.resolve(options->spec, names ? &*names : nullptr);
              auto value = format_arch_list(resolved.list, dialect);
              if (options->json) {
                print_json({{"spec", options->spec},
                            {"cuda", context.toolchain.version().str()},
                            {"toolkit", context.toolchain.describe()},
                            {"dialect", to_string(dialect)},
                            {"consumer", names ? names->consumer : pytorch_cmake_arch_names().consumer},
                            {"torch_cuda_arch_list", value},
                            {"targets", to_json(resolved.list)},
                            {"notes", resolved.notes}});
              } else {
                for (const auto& note : context.toolchain.notes) std::cerr << "note: " << note << "\n";
                for (const auto& note : resolved.notes) std::cerr << "note: " << note << "\n";
                std::cout << value << "\n";
              }
              return ExitCode::success;
            };
          }};
}

}  // namespace archbuild
