#include <cstdio>
#include <iostream>

#include "builder/progress.h"
#include "cli/build_options.h"
#include "cli/command.h"
#include "cli/json_output.h"
#include "core/strings.h"
#include "core/system_info.h"
#include "pipeline/build_session.h"
#include "ui/terminal.h"

namespace archbuild {

namespace {
// "disk about 1.2 GB (...), memory about 9.0 GB at 2 compiles at once (4.5 GB each)"
std::string describe_needs(const BuildPlan& plan) {
  char memory[160];
  std::snprintf(memory, sizeof memory, "memory about %.1f GB at %u compile%s at once (%.1f GB each)",
                plan.peak_memory_gb, plan.jobs.compiles_at_once, plan.jobs.compiles_at_once == 1 ? "" : "s",
                plan.job_memory_gb);
  std::string disk = plan.disk_bytes ? "disk about " + format_bytes(*plan.disk_bytes) + " (" + plan.disk_basis + ")"
                                     : "disk unknown until a first build (no [estimate] disk_gb in the recipe)";
  return disk + ", " + memory;
}

// "https://host/repo v1.0, the project in python/pkg/"
std::string describe_source(const SourceTarget& target) {
  std::string text = target.url + " " +
                     (target.snapshot ? "as it is on disk (snapshot " + target.snapshot->commit.substr(0, 12) + ")"
                                      : target.ref);
  if (!target.subdirectory.empty()) text += ", the project in " + target.subdirectory + "/";
  return text;
}
}  // namespace

Command plan_command() {
  return {"plan", "Print the exact environment and command a build would run, without building", [](CLI::App& app) {
            auto options = std::make_shared<BuildOptions>();
            options->declare(app);
            return [options]() {
              auto [context, plan] = plan_build(options->request());
              if (options->json) {
                auto out = plan.to_json();
                out["script"] = plan.shell_script();
                out["source"] = {{"url", context.target.url},
                                 {"ref", context.target.ref},
                                 {"subdirectory", context.target.subdirectory}};
                if (context.target.snapshot) out["source"]["snapshot"] = context.target.snapshot->to_json();
                print_json(out);
                return ExitCode::success;
              }
              std::cout << paint("# archbuild plan: " + plan.package + " " + plan.ref + " (recipe " + plan.recipe +
                                     ", " + plan.build_system + ") for " + context.archs.list.canonical(),
                                 Style::bold)
                        << "\n# source: " << describe_source(context.target)
                        << "\n# toolkit: " << context.host.toolchain.describe() << "\n# jobs: " << plan.jobs.reason
                        << (plan.jobs.parallelism.empty() ? "" : "\n# parallelism: " + plan.jobs.parallelism)
                        << "\n# time: "
                        << (plan.forecast.from_history
                                ? "about " + format_duration(*plan.forecast.seconds) + " (" + plan.forecast.basis + ")"
                                : plan.forecast.basis)
                        << "\n# needs: " << describe_needs(plan) << "\n# network: " << plan.network.description << "\n";
              if (plan.cluster.configured) std::cout << "# compile cluster: " << plan.cluster.description << "\n";
              for (const auto& library : plan.recipe_env.libraries) std::cout << "# library: " << library << "\n";
              for (const auto& requirement : plan.requirements) std::cout << "# requires: " << requirement << "\n";
              std::cout << "# arch enforcement: "
                        << (plan.enforcement.on
                                ? "on: every nvcc call builds exactly " + plan.enforcement.nvcc_targets +
                                      " (the step launcher rewrites its target flags; "
                                      "--keep-project-archs turns it off)"
                                : std::string("off: the project's own arch flags are kept, the "
                                              "label says what the wheel holds"))
                        << "\n";
              if (plan.configure.fresh) std::cout << "# CMAKE_FRESH=1: " << plan.configure.reason << "\n";
              if (const auto portable = plan.key.get(key_name::portable); !portable.empty())
                std::cout << "# portable: after the build, auditwheel repair (" << portable
                          << ") bundles what only this machine has and tags the wheel manylinux; the clean room "
                             "proves it\n";
              if (context.compiler_launcher != CompilerLauncher::none && plan.dialect == ArchDialect::extension)
                std::cout << "# " << launcher_program(context.compiler_launcher)
                          << " reaches cpp_extension's compiles through shims under " << context.cache.root().string()
                          << " (ccache-bin/, launcher-cuda/) that `archbuild build` "
                          << "creates before it runs this\n";
              if (!plan.configure.stale_outputs.empty())
                std::cout << "# removes stale setuptools outputs first (setuptools would reuse them)\n";
              std::cout << "# wheel to: " << plan.wheel_dir.string() << ", log: " << plan.log_path.string() << "\n"
                        << plan.shell_script();
              return ExitCode::success;
            };
          }};
}

}  // namespace archbuild
