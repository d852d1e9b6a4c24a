#include <iostream>
#include <optional>

#include "binary/binary_walker.h"
#include "binary/kernel_names.h"
#include "cli/command.h"
#include "cli/common_options.h"
#include "cli/inventory_output.h"
#include "cli/json_output.h"
#include "core/error.h"

namespace archbuild {

Command inspect_command() {
  return {"inspect", "List the SASS and PTX in binaries, wheels and directories", [](CLI::App& app) {
            struct Options {
              std::vector<std::string> paths, device_ccs;
              bool json = false, verify = false, all_files = false, kernels = false;
            };
            auto options = std::make_shared<Options>();
            app.add_option("paths", options->paths, "ELF files, cubins, fatbins, wheels, directories")->required();
            app.add_option("--device-cc", options->device_ccs, "Give a verdict for a device of this CC (repeatable)");
            app.add_flag("--verify-cubins", options->verify,
                         "Also decompress every cubin and check its ELF header's arch");
            app.add_flag("--all-files", options->all_files, "Also list binaries without CUDA code");
            app.add_flag("--kernels", options->kernels,
                         "Also list each binary's kernels (entry functions), demangled, per SASS and PTX arch");
            add_json_flag(app, options->json, "Print a JSON object");
            return [options]() {
              auto devices = parse_device_ccs(options->device_ccs);
              InventoryPrinter printer(devices, options->json, options->all_files);
              WalkStats total;
              for (const auto& path : options->paths) {
                // The census needs the image bytes, which live only during with_bytes.
                std::optional<BinaryKernels> kernels;
                WalkOptions walk{options->verify, {}};
                if (options->kernels)
                  walk.with_bytes = [&](const BinaryInventory& inventory, const ByteView& bytes) {
                    kernels = list_kernels(inventory, bytes);
                  };
                auto stats = walk_binaries(path, walk, [&](const BinaryInventory& inventory) {
                  bool listed = kernels && kernels->path == inventory.path;
                  printer.add(inventory, listed ? &*kernels : nullptr);
                  kernels.reset();
                });
                total.files_seen += stats.files_seen;
                total.binaries += stats.binaries;
                total.with_cuda_code += stats.with_cuda_code;
                total.unreadable += stats.unreadable;
              }
              printer.finish(total);
              if (total.unreadable) return ExitCode::bad_input;
              if (printer.any_without_kernel_image()) return ExitCode::work_failed;
              return ExitCode::success;
            };
          }};
}

}  // namespace archbuild
