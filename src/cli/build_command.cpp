#include <fstream>
#include <iostream>

#include "build/build_executor.h"
#include "cache/cache_key.h"
#include "cache/wheel_store.h"
#include "validate/static_validation.h"
#include "cli/build_context.h"
#include "cli/command.h"
#include "core/strings.h"
#include "source/source_tree.h"
#include "ui/terminal.h"

namespace archbuild {

Command build_command() {
  return {"build", "Check out and build a recipe, directory or git URL for the given archs",
          [](CLI::App& app) {
            auto options = std::make_shared<BuildOptions>();
            options->declare(app);
            app.footer("Exit: 0 built; 1 the build failed (first error shown, then the log path); 2 bad input; "
                       "3 this machine cannot; 130 interrupted (the build's processes are stopped, the build dir "
                       "is kept and a rerun resumes).");
            return [options]() {
              auto context = BuildContext::resolve(*options);
              auto& status = *context.status;
              auto line = [&](const std::string& stage, const std::string& text) {
                if (!options->json) status.print(paint(stage, Style::bold) + std::string(12 - std::min<size_t>(11, stage.size()), ' ') + text);
              };
              line("archs", context.archs.list.canonical() + " (" + context.host.toolchain.describe() + ")");
              MirrorCache mirrors(context.cache_dir, [&](const FetchProgress& p) {
                status.update("fetch " + p.name + ": " + std::to_string(p.received_objects) + "/" +
                              std::to_string(p.total_objects) + " objects");
              });
              auto tree = checkout_source(context.checkout_request(*options), mirrors);
              line("source", context.target.name + " " + tree.ref + " = " + tree.commit.substr(0, 12) + ", " +
                                 std::to_string(tree.submodules.size()) + " submodules, " +
                                 std::to_string(tree.patches.size()) + " patches");
              auto plan = context.plan(*options, tree);
              line("plan", std::to_string(plan.jobs.jobs) + " jobs" +
                               (plan.jobs.nvcc_threads > 1 ? ", nvcc --threads " + std::to_string(plan.jobs.nvcc_threads) : "") +
                               ", TORCH_CUDA_ARCH_LIST=" + plan.arch_list + (plan.cmake_fresh ? ", CMAKE_FRESH=1 (" + plan.cmake_fresh_reason + ")" : ""));
              auto key = CacheKey::compute(plan.key_inputs);
              std::filesystem::create_directories(plan.out_dir);
              std::ofstream(plan.out_dir / "key.txt") << key.text;  // `archbuild cache why` diffs these
              WheelStore store(context.cache_dir);
              KeyLock lock(store.lock_path(key));  // the same key building elsewhere: wait, then reuse
              if (lock.waited()) line("cache", "waited for another build of the same key");
              if (auto hit = store.find(key); hit && !options->rebuild) {
                line("cache", "hit " + key.hash.substr(0, 16) + ": nothing to build");
                std::vector<std::string> wheels;
                for (const auto& wheel : hit->wheels) {
                  wheels.push_back(wheel.string());
                  line("wheel", wheel.string());
                }
                nlohmann::json report = {{"cache_hit", true}, {"key", key.hash},         {"wheels", wheels},
                                         {"store", hit->dir.string()}, {"plan", plan.to_json()}, {"source", tree.to_json()}};
                std::ofstream(plan.out_dir / "report.json") << report.dump(2) << "\n";
                if (options->json) print_json(report);
                return ExitCode::success;
              }
              line("cache", "miss " + key.hash.substr(0, 16) + " (" + (plan.out_dir / "key.txt").string() + ")");
              auto result = execute_build(plan, status);
              auto report = nlohmann::json({{"plan", plan.to_json()}, {"source", tree.to_json()}, {"build", result.to_json(plan)},
                                           {"key", key.hash}, {"cache_hit", false}, {"validated", !options->no_validate}});
              bool published = false;
              if (result.ok) {
                // A wheel is published only once it has passed validation (static checks here).
                std::vector<std::filesystem::path> wheels(result.wheels.begin(), result.wheels.end());
                nlohmann::json validation = nlohmann::json::array();
                bool valid = true;
                if (!options->no_validate)
                  for (const auto& wheel : wheels) {
                    auto checked = validate_wheel_static(wheel, context.archs.list);
                    valid = valid && checked.ok();
                    auto entry = checked.to_json();
                    entry["wheel"] = wheel.string();
                    validation.push_back(entry);
                    for (const auto& gap : checked.gaps)
                      line("validate", paint("missing", Style::red) + " " + gap.file + ": " + gap.missing);
                    for (const auto& error : checked.record.errors) line("validate", paint("RECORD", Style::red) + " " + error);
                  }
                report["validation"] = validation;
                if (!valid) {
                  auto kept = store.quarantine(key, wheels, report.dump(2));
                  line("validate", paint("FAILED", Style::red) + ": not published; kept in " + kept.string());
                  result.ok = false;
                } else {
                  line("validate", options->no_validate ? "skipped (--no-validate)" : "ok (static: RECORD, SASS/PTX per arch; no device check in this version)");
                  auto entry = store.publish(key, wheels, report.dump(2));
                  report["store"] = entry.dir.string();
                  published = true;
                }
              }
              report["published"] = published;
              std::ofstream(plan.out_dir / "report.json") << report.dump(2) << "\n";
              if (options->json) {
                print_json(report);
              } else {
                char summary[128];
                std::snprintf(summary, sizeof summary, "%.1f s, %u attempt%s%s", result.seconds,
                              static_cast<unsigned>(result.attempts.size()), result.attempts.size() == 1 ? "" : "s",
                              result.oom_retries ? (", " + std::to_string(result.oom_retries) + " OOM retries").c_str() : "");
                if (result.ok) {
                  line("build", std::string("ok, ") + summary);
                  for (const auto& wheel : result.wheels) line("wheel", wheel);
                  if (published) line("cache", "published " + report["store"].get<std::string>());
                  if (result.trace_written) line("trace", plan.trace_path.string());
                  if (!result.slowest.empty()) {
                    std::string slow;
                    for (size_t i = 0; i < std::min<size_t>(3, result.slowest.size()); ++i)
                      slow += (i ? ", " : "") + result.slowest[i].target + " " +
                              std::to_string(result.slowest[i].duration_ms() / 1000.0).substr(0, 4) + " s";
                    line("slowest", slow);
                  }
                } else if (result.interrupted) {
                  line("build", paint("interrupted", Style::yellow) + "; the build dir is kept, rerun to resume");
                } else if (result.attempts.back().outcome == "ok") {
                  line("build", "ok, but the wheel failed validation (see above)");
                } else {
                  line("build", paint("FAILED", Style::red) + ", " + summary);
                  if (!result.failed_target.empty()) std::cerr << "failed target: " << result.failed_target << "\n";
                  if (!result.failing_command.empty()) std::cerr << "command: " << result.failing_command << "\n";
                  for (const auto& text : result.error_excerpt) std::cerr << "  | " << text << "\n";
                }
                line("log", plan.log_path.string());
              }
              if (result.interrupted) return ExitCode::interrupted;
              return result.ok ? ExitCode::success : ExitCode::work_failed;
            };
          }};
}

}  // namespace archbuild
