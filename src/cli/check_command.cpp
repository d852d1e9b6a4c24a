#include <cstdlib>
#include <iostream>

#include "cli/command.h"
#include "cli/common_options.h"
#include "cli/json_output.h"
#include "cluster/cluster_setting.h"
#include "config/setting_names.h"
#include "config/settings.h"
#include "core/error.h"
#include "core/system_info.h"
#include "preflight/cluster_checks.h"
#include "preflight/preflight.h"

namespace archbuild {

Command check_command() {
  return {"check", "Preflight: prove this machine can build the given archs", [](CLI::App& app) {
            struct Options {
              std::string spec, cuda, build_dir = ".";
              double min_build_disk_gb = 20, min_temp_disk_gb = 5, job_memory_gb = 4.5;
              bool json = false;
              SettingFlags settings;
            };
            auto options = std::make_shared<Options>();
            app.add_option("--arch", options->spec, "Arch spec, as for `archbuild arch`")->required();
            app.add_option("--cuda", options->cuda, "CUDA version to use (default: installed)");
            app.add_option("--build-dir", options->build_dir, "Where the build will write (disk check)");
            app.add_option("--min-build-disk-gb", options->min_build_disk_gb, "Free disk the build needs")
                ->capture_default_str();
            app.add_option("--min-temp-disk-gb", options->min_temp_disk_gb, "Free disk in TMPDIR for nvcc")
                ->capture_default_str();
            app.add_option("--job-memory-gb", options->job_memory_gb, "Memory one compile job needs")
                ->capture_default_str();
            app.add_option("--compile-cluster", options->settings.compile_cluster,
                           "Check the link to this sccache-dist scheduler too (default: the compile_cluster setting)");
            app.add_option("--compile-cluster-token-file", options->settings.compile_cluster_token_file,
                           "File holding the scheduler's client token");
            add_cache_dir_option(app, options->settings.cache_dir);
            add_json_flag(app, options->json, "Print a JSON object");
            return [options]() {
              // A build dir that exists must be a directory: a file's free space says nothing.
              std::error_code ec;
              if (std::filesystem::exists(options->build_dir, ec) &&
                  !std::filesystem::is_directory(options->build_dir, ec))
                fail_bad_input("--build-dir " + options->build_dir + " is not a directory");
              auto context = HostContext::gather(options->cuda);
              auto resolved = context.resolve(options->spec);
              const char* tmp = std::getenv("TMPDIR");
              constexpr double gib = 1024.0 * 1024 * 1024;
              PreflightInputs inputs;
              inputs.toolchain = &context.toolchain;
              inputs.archs = &resolved.list;
              inputs.gpus = &context.gpus;
              inputs.build_dir = options->build_dir;
              inputs.temp_dir = tmp && *tmp ? tmp : "/tmp";
              inputs.min_build_disk_bytes = static_cast<uint64_t>(options->min_build_disk_gb * gib);
              inputs.min_temp_disk_bytes = static_cast<uint64_t>(options->min_temp_disk_gb * gib);
              inputs.job_memory_bytes = static_cast<uint64_t>(options->job_memory_gb * gib);
              auto checks = run_preflight(inputs);
              // The compile cluster, when one is configured: checking it
              // is what --compile-cluster asks, whatever the launcher setting.
              auto flags = options->settings.by_key();
              if (!options->settings.compile_cluster.empty()) flags[setting_name::compiler_launcher] = "sccache";
              const auto settings = Settings::load(flags);
              if (const auto cluster = resolve_cluster_setting(settings); cluster.configured()) {
                ClusterCheckInputs cluster_inputs;
                cluster_inputs.setting = cluster;
                cluster_inputs.toolchain = &context.toolchain;
                try {
                  cluster_inputs.probe_compiler = detect_host_compiler(context.toolchain).path;
                } catch (const UserError&) {
                  cluster_inputs.probe_compiler = "c++";  // the host compiler check says why
                }
                cluster_inputs.cache_dir = settings.cache_dir();
                for (auto& check : check_compile_cluster(cluster_inputs)) checks.push_back(std::move(check));
              }

              bool all_passed = true;
              auto json_checks = nlohmann::json::array();
              for (const auto& check : checks) {
                if (check.verdict == CheckVerdict::fail) all_passed = false;
                json_checks.push_back(
                    {{"name", check.name}, {"verdict", verdict_word(check.verdict)}, {"detail", check.detail}});
              }
              if (options->json) {
                print_json({{"archs", resolved.list.canonical()},
                            {"toolkit", context.toolchain.describe()},
                            {"checks", json_checks},
                            {"ok", all_passed}});
              } else {
                for (const auto& check : checks) {
                  std::string name = check.name;
                  name.resize(std::max<size_t>(name.size(), 18), ' ');
                  std::cout << verdict_label(check.verdict) << "  " << name << "  " << check.detail << "\n";
                }
                std::cout << (all_passed ? "all checks passed" : "some checks FAILED") << "\n";
              }
              return all_passed ? ExitCode::success : ExitCode::environment;
            };
          }};
}

}  // namespace archbuild
