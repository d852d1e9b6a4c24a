#include <iostream>

#include "cli/command.h"
#include "cli/host_context.h"
#include "core/error.h"
#include "ui/terminal.h"
#include "validate/static_validation.h"

namespace archbuild {

Command validate_command() {
  return {"validate", "Check a wheel: RECORD hashes and, per target arch, the SASS and PTX of its CUDA libraries",
          [](CLI::App& app) {
            struct Options {
              std::string wheel, arch, cuda;
              bool json = false;
            };
            auto options = std::make_shared<Options>();
            app.add_option("wheel", options->wheel, "The wheel")->required();
            app.add_option("--arch", options->arch, "Targets the wheel must serve (default: the visible GPUs)");
            app.add_option("--cuda", options->cuda, "CUDA version the arch spec resolves against");
            app.add_flag("--json", options->json, "Print JSON");
            app.footer("Static checks run everywhere; kernel launches on the device are not part of this "
                       "version, and the report says so. Exit: 0 valid; 1 invalid (tampered file, missing arch); "
                       "2 not a readable wheel or bad arch spec; 3 no --arch and no GPU.");
            return [options]() {
              std::error_code ec;
              if (!std::filesystem::is_regular_file(options->wheel, ec)) fail_bad_input("no such wheel: " + options->wheel);
              auto context = HostContext::gather(options->cuda);
              auto targets = context.resolve(options->arch.empty() ? "native" : options->arch).list;
              auto result = validate_wheel_static(options->wheel, targets);
              std::string device = context.gpus.devices.empty()
                                       ? "not checked: no GPU (" + context.gpus.unavailable_reason + ")"
                                       : "not checked: kernel launches on the device are not part of this version";
              if (options->json) {
                auto out = result.to_json();
                out["wheel"] = options->wheel;
                out["targets"] = targets.canonical();
                out["device_check"] = device;
                print_json(out);
              } else {
                std::cout << "wheel    " << options->wheel << "\n"
                          << "targets  " << targets.canonical() << "\n"
                          << "RECORD   " << (result.record.ok() ? paint("ok", Style::green) : paint("FAILED", Style::red))
                          << " (" << result.record.files_checked << " files hashed)\n";
                for (const auto& error : result.record.errors) std::cout << "    " << error << "\n";
                std::cout << "CUDA     " << result.libraries.size() << " librar" << (result.libraries.size() == 1 ? "y" : "ies") << "\n";
                if (result.libraries.empty()) std::cout << "    the wheel has no CUDA code to validate\n";
                for (const auto& gap : result.gaps)
                  std::cout << "    " << paint("missing", Style::red) << " " << gap.file << ": " << gap.missing
                            << " (target " << gap.target << ")\n";
                for (const auto& text : result.unreadable) std::cout << "    unreadable: " << text << "\n";
                std::cout << "device   " << device << "\n"
                          << (result.ok() ? paint("valid (static checks)", Style::green) : paint("INVALID", Style::red)) << "\n";
              }
              return result.ok() ? ExitCode::success : ExitCode::work_failed;
            };
          }};
}

}  // namespace archbuild
