#include <chrono>
#include <optional>
#include <fstream>
#include <iostream>

#include "build/build_executor.h"
#include "cache/cache_index.h"
#include "cache/cache_key.h"
#include "cache/wheel_store.h"
#include "cli/build_context.h"
#include "cli/command.h"
#include "cli/validation_output.h"
#include "core/error.h"
#include "core/file_lock.h"
#include "core/sha256.h"
#include "core/strings.h"
#include "source/source_tree.h"
#include "ui/terminal.h"
#include "validate/wheel_validation.h"
#include "wheel/wheel_relabel.h"

namespace archbuild {

namespace {

using Line = std::function<void(const std::string& stage, const std::string& text)>;

std::string utc_now() {
  auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

nlohmann::json wheel_list(const std::vector<std::filesystem::path>& wheels) {
  auto list = nlohmann::json::array();
  for (const auto& wheel : wheels)
    list.push_back({{"file", wheel.filename().string()}, {"path", wheel.string()}, {"sha256", sha256_file_hex(wheel)},
                    {"size", std::filesystem::file_size(wheel)}});
  return list;
}

// How a user installs what was published: exact version, from the cache's index.
std::vector<std::string> install_lines(const std::vector<std::filesystem::path>& wheels, const CacheIndex& index) {
  std::vector<std::string> lines;
  for (const auto& wheel : wheels)
    if (auto name = WheelName::parse(wheel.filename().string()))
      lines.push_back("pip install \"" + name->name + "==" + name->version + "\" --index-url file://" +
                      index.simple_dir.string());
  return lines;
}

// After a successful build: the local version label, validation, then
// publish (store entry + index) or quarantine. Returns false when the wheel
// failed validation.
bool finish_wheels(const BuildContext& context, const BuildOptions& options, const BuildPlan& plan, const CacheKey& key,
                   const std::vector<std::string>& built, nlohmann::json& report, const Line& line) {
  const auto label = local_version_label(context.host.toolchain.version(), context.archs.list);
  std::vector<std::filesystem::path> wheels;
  for (const auto& wheel : built) {
    auto relabeled = relabel_wheel(wheel, label);
    wheels.push_back(relabeled.path);
    line("label", relabeled.path.filename().string());
  }
  WheelStore store(context.cache_dir);
  report["validated"] = !options.no_validate;
  auto validations = nlohmann::json::array();
  bool valid = true;
  if (options.no_validate) {
    line("validate", paint("skipped", Style::yellow, stderr) + " (--no-validate, recorded in the manifest)");
  } else {
    for (const auto& wheel : wheels) {
      line("validate", wheel.filename().string() + " against " + context.archs.list.canonical());
      auto validation = validate_wheel({wheel, context.archs.list, context.target.recipe, plan.python, context.host.gpus,
                                        plan.out_dir / "validate" / wheel.stem()});
      print_validation(validation, [&](const std::string& text) { line("", text); }, stderr);
      valid = valid && validation.ok();
      auto entry = validation.to_json();
      entry["wheel"] = wheel.string();
      validations.push_back(entry);
      report["validation_scope"] = validation.scope();
    }
  }
  report["validation"] = validations;
  report["wheels"] = wheel_list(wheels);
  report["local_version_label"] = label;
  if (!valid) {
    auto kept = store.quarantine(key, wheels, report.dump(2));
    report["quarantine"] = kept.string();
    line("validate", paint("FAILED", Style::red, stderr) + ": not published; the wheel and its report are in " + kept.string());
    return false;
  }
  report["published_at"] = utc_now();
  auto entry = store.publish(key, wheels, report.dump(2));
  auto index = refresh_cache_index(context.cache_dir, store);
  report["store"] = entry.dir.string();
  report["index"] = index.simple_dir.string();
  report["install"] = install_lines(entry.wheels, index);
  return true;
}

ExitCode report_cache_hit(const StoreEntry& hit, const CacheKey& key, const BuildPlan& plan, const SourceTree& tree,
                          const BuildContext& context, const BuildOptions& options, const Line& line) {
  line("cache", "hit " + key.hash.substr(0, 16) + ": nothing to build");
  auto index = cache_index_paths(context.cache_dir);
  for (const auto& wheel : hit.wheels) line("wheel", wheel.string());
  auto install = install_lines(hit.wheels, index);
  for (const auto& text : install) line("install", text);
  nlohmann::json report = {{"cache_hit", true},         {"key", key.hash},           {"wheels", wheel_list(hit.wheels)},
                           {"store", hit.dir.string()}, {"plan", plan.to_json()},    {"source", tree.to_json()},
                           {"install", install},        {"index", index.simple_dir.string()}};
  if (hit.manifest.is_object()) report["validation_scope"] = hit.manifest.value("validation_scope", "");
  std::ofstream(plan.out_dir / "report.json") << report.dump(2) << "\n";
  if (options.json) print_json(report);
  return ExitCode::success;
}

void print_build_summary(const BuildResult& result, const BuildPlan& plan, const nlohmann::json& report, const Line& line) {
  char summary[128];
  std::snprintf(summary, sizeof summary, "%.1f s, %u attempt%s%s", result.seconds,
                static_cast<unsigned>(result.attempts.size()), result.attempts.size() == 1 ? "" : "s",
                result.oom_retries ? (", " + std::to_string(result.oom_retries) + " OOM retries").c_str() : "");
  if (result.ok) {
    line("build", std::string("ok, ") + summary);
    for (const auto& wheel : report.value("wheels", nlohmann::json::array())) line("wheel", wheel["path"].get<std::string>());
    if (report.contains("store")) line("cache", "published " + report["store"].get<std::string>());
    for (const auto& text : report.value("install", nlohmann::json::array())) line("install", text.get<std::string>());
    if (result.trace_written) line("trace", plan.trace_path.string());
    if (!result.slowest.empty()) {
      std::string slow;
      for (size_t i = 0; i < std::min<size_t>(3, result.slowest.size()); ++i)
        slow += (i ? ", " : "") + result.slowest[i].target + " " +
                std::to_string(result.slowest[i].duration_ms() / 1000.0).substr(0, 4) + " s";
      line("slowest", slow);
    }
  } else if (result.interrupted) {
    line("build", paint("interrupted", Style::yellow, stderr) + "; the build dir is kept, rerun to resume");
  } else if (!result.attempts.empty() && result.attempts.back().outcome == "ok") {
    line("build", "ok, but the wheel failed validation (see above)");
  } else {
    line("build", paint("FAILED", Style::red, stderr) + ", " + summary);
    if (!result.failed_target.empty()) std::cerr << "failed target: " << result.failed_target << "\n";
    if (!result.failing_command.empty()) std::cerr << "command: " << result.failing_command << "\n";
    for (const auto& text : result.error_excerpt) std::cerr << "  | " << text << "\n";
  }
  line("log", plan.log_path.string());
}

ExitCode run_build(const BuildOptions& options);

// The newest published wheel of `dependency` built for the same arch list
// (in its own dialect) and toolkit, if the cache has one.
std::optional<std::filesystem::path> cached_dependency(const BuildContext& context, const Recipe& dependency,
                                                       const std::string& cuda) {
  const auto arch_list = format_arch_list(context.archs.list, dependency.dialect);
  for (const auto& entry : WheelStore(context.cache_dir).entries())
    if (entry.value("recipe") == dependency.name && entry.value("arch_list") == arch_list && entry.value("cuda") == cuda &&
        !entry.wheels.empty())
      return entry.wheels.front();
  return std::nullopt;
}

// What a recipe with dependencies (an extension on torch) builds against:
// --use-installed-torch, --torch-wheel, or the cache's wheels for the same
// arch list, built first when missing.
DependencyEnv resolve_dependencies(const BuildContext& context, const BuildOptions& options, const std::string& cuda,
                                   const Line& line) {
  const Recipe& recipe = *context.target.recipe;
  DependencyRequest request{&recipe, context.python(), context.out_dir / "build-env", options.use_installed_torch, {}};
  if (recipe.depends_on.empty()) {
    if (options.use_installed_torch || !options.torch_wheel.empty())
      fail_bad_input("recipe " + recipe.name + " depends on nothing: --torch-wheel / --use-installed-torch do not apply");
    return prepare_dependency_env(request);
  }
  if (!options.torch_wheel.empty()) {
    request.wheels = {std::filesystem::absolute(options.torch_wheel)};
  } else if (!options.use_installed_torch) {
    for (const auto& name : recipe.depends_on) {
      const Recipe* dependency = context.book.find(name);
      auto wheel = cached_dependency(context, *dependency, cuda);
      if (!wheel) {
        line("deps", "no " + name + " wheel for " + context.archs.list.canonical() + " in the cache: building it first");
        BuildOptions dependency_options = options;
        dependency_options.what = name;
        dependency_options.ref = dependency_options.out = dependency_options.recipe = "";
        dependency_options.patches.clear();
        dependency_options.json = false;
        const std::string way_out = "; fix that build, or build against an existing torch with --torch-wheel FILE "
                                    "or --use-installed-torch";
        ExitCode built;
        try {
          built = run_build(dependency_options);
        } catch (const UserError& error) {
          // say why torch was being built at all (a fetch of PyTorch on an offline machine, say)
          throw UserError(error.code(), "building the dependency " + name + " (no " + name + " wheel for " +
                                            context.archs.list.canonical() + " in the cache): " + error.what() + way_out);
        }
        if (built != ExitCode::success) fail_work("building the dependency " + name + " failed" + way_out);
        wheel = cached_dependency(context, *dependency, cuda);
        if (!wheel) fail_work("the dependency " + name + " was built but is not in the cache");
      }
      request.wheels.push_back(*wheel);
    }
  }
  auto env = prepare_dependency_env(request);
  line("deps", env.description);
  return env;
}

ExitCode run_build(const BuildOptions& options) {
  auto context = BuildContext::resolve(options);
  auto& status = *context.status;
  Line line = [&](const std::string& stage, const std::string& text) {
    if (options.json) return;
    status.print(paint(stage, Style::bold, stderr) + std::string(12 - std::min<size_t>(11, stage.size()), ' ') + text);
  };
  line("archs", context.archs.list.canonical() + " (" + context.host.toolchain.describe() + ")");
  MirrorCache mirrors(context.cache_dir, [&](const FetchProgress& p) {
    status.update("fetch " + p.name + ": " + std::to_string(p.received_objects) + "/" + std::to_string(p.total_objects) + " objects");
  });
  // One build per work tree at a time: a second one (another arch list of
  // the same ref, say) waits rather than checking out under a running build.
  FileLock tree_lock(context.source_dir.string() + ".lock");
  if (tree_lock.waited()) line("source", "waited for another build in " + context.source_dir.string());
  auto tree = checkout_source(context.checkout_request(options), mirrors);
  line("source", context.target.name + " " + tree.ref + " = " + tree.commit.substr(0, 12) + ", " +
                     std::to_string(tree.submodules.size()) + " submodules, " + std::to_string(tree.patches.size()) + " patches");
  auto deps = resolve_dependencies(context, options, context.host.toolchain.key_string(), line);
  auto plan = context.plan(options, tree, &deps);
  line("plan", std::to_string(plan.jobs.jobs) + " jobs" +
                   (plan.jobs.nvcc_threads > 1 ? ", nvcc --threads " + std::to_string(plan.jobs.nvcc_threads) : "") +
                   ", TORCH_CUDA_ARCH_LIST=" + plan.arch_list +
                   (plan.cmake_fresh ? ", CMAKE_FRESH=1 (" + plan.cmake_fresh_reason + ")" : "") +
                   (plan.stale_outputs.empty() ? "" : ", removing " + std::to_string(plan.stale_outputs.size()) +
                                                          " stale setuptools outputs under build/"));
  auto key = CacheKey::compute(plan.key_inputs);
  std::filesystem::create_directories(plan.out_dir);
  std::ofstream(plan.out_dir / "key.txt") << key.text;  // `archbuild cache why` diffs these
  WheelStore store(context.cache_dir);
  FileLock lock(store.lock_path(key));  // the same key building elsewhere: wait, then reuse
  if (lock.waited()) line("cache", "waited for another build of the same key");
  if (auto hit = store.find(key); hit && !options.rebuild)
    return report_cache_hit(*hit, key, plan, tree, context, options, line);
  line("cache", "miss " + key.hash.substr(0, 16) + " (" + (plan.out_dir / "key.txt").string() + ")");

  auto result = execute_build(plan, status);
  nlohmann::json report = {{"plan", plan.to_json()}, {"source", tree.to_json()}, {"build", result.to_json(plan)},
                           {"key", key.hash},        {"cache_hit", false}};
  bool published = false;
  if (result.ok) {
    published = finish_wheels(context, options, plan, key, result.wheels, report, line);
    result.ok = published;
  }
  report["published"] = published;
  std::ofstream(plan.out_dir / "report.json") << report.dump(2) << "\n";
  if (options.json)
    print_json(report);
  else
    print_build_summary(result, plan, report, line);
  if (result.interrupted) return ExitCode::interrupted;
  return result.ok ? ExitCode::success : ExitCode::work_failed;
}

}  // namespace

Command build_command() {
  return {"build", "Check out, build, validate and publish a recipe, directory or git URL for the given archs",
          [](CLI::App& app) {
            auto options = std::make_shared<BuildOptions>();
            options->declare(app);
            app.footer("Exit: 0 built, validated and published (or a cache hit); 1 the build or its validation failed "
                       "(first error shown, then the log path; an invalid wheel is kept in <cache>/quarantine); "
                       "2 bad input; 3 this machine cannot; 130 interrupted (the build's processes are stopped, the "
                       "build dir is kept and a rerun resumes).");
            return [options]() { return run_build(*options); };
          }};
}

}  // namespace archbuild
