#include "pipeline/build_session.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <optional>

#include "builder/build_history.h"
#include "builder/build_requirements.h"
#include "builder/launcher_shims.h"
#include "builder/progress.h"
#include "builder/project_switches.h"
#include "builder/system_libraries.h"
#include "cache/cache_index.h"
#include "cache/cache_key.h"
#include "cache/install_lines.h"
#include "cache/provenance.h"
#include "cache/wheel_store.h"
#include "core/error.h"
#include "core/file_lock.h"
#include "core/interrupt.h"
#include "core/json_text.h"
#include "core/regular_file.h"
#include "core/sha256.h"
#include "core/system_info.h"
#include "pipeline/dependency_resolver.h"
#include "process/run_process.h"
#include "wheel/build_record.h"
#include "wheel/wheel_archive.h"
#include "wheel/wheel_relabel.h"
#include "wheel/wheel_variant.h"

namespace archbuild {

namespace {

std::string utc_now() {
  auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char text[32];
  std::tm parts{};
  gmtime_r(&now, &parts);
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

std::vector<ReportedWheel> reported(const std::vector<std::filesystem::path>& wheels) {
  std::vector<ReportedWheel> list;
  for (const auto& wheel : wheels) list.push_back(ReportedWheel::of(wheel));
  return list;
}

// torch.utils.cpp_extension takes no compiler-launcher variable: the plan
// points CUDA_HOME and PATH at shims that run the step launcher (progress,
// arch enforcement) and the compiler launcher, made here, where the build
// runs (planning writes nothing).
void prepare_launcher_shims(const BuildContext& context, const BuildPlan& plan) {
  const auto& launcher = context.compiler_launcher;
  if (launcher == "ccache") ensure_ccache_masquerade(context.cache.root());
  const auto& toolkit = context.host.toolchain.installed;
  if (plan.dialect == ArchDialect::extension && toolkit && (!launcher.empty() || plan.enforce_archs)) {
    const auto dir = launcher_toolkit_dir(context.cache.root(), launcher, toolkit->root, plan.self_executable);
    ensure_launcher_toolkit(dir, plan.self_executable,
                            launcher.empty() ? std::filesystem::path() : *find_on_path(launcher), toolkit->root);
  }
  // CMake's compiler (CUDACXX): every nvcc call, the device link included,
  // through the step launcher; no compiler launcher (CMake adds its own).
  if (toolkit && plan.enforce_archs)
    ensure_launcher_toolkit(launcher_toolkit_dir(context.cache.root(), "", toolkit->root, plan.self_executable),
                            plan.self_executable, {}, toolkit->root);
}

enum class Finish { published, invalid, untestable_here, interrupted };

// The entry's provenance (signed with the signing_key setting when set) and SBOM.
std::vector<std::pair<std::string, std::string>> provenance_files(const BuildContext& context, const CacheKey& key,
                                                                  const std::map<std::string, std::string>& inputs,
                                                                  const BuildReport& report,
                                                                  const std::string& manifest,
                                                                  const std::string& started_at,
                                                                  const std::vector<std::filesystem::path>& variants) {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || !host[0]) std::snprintf(host, sizeof host, "localhost");
  ProvenanceInputs provenance{key.hash,
                              inputs,
                              context.target.url,
                              report.wheels,
                              sha256_hex(manifest),
                              started_at,
                              report.published_at,
                              ARCHBUILD_VERSION,
                              host};
  for (const auto& variant : variants) provenance.wheels.push_back(ReportedWheel::of(variant));
  std::optional<Ed25519Key> signer;
  if (const auto& path = context.settings.get("signing_key").value; !path.empty())
    signer = Ed25519Key::load_private(path);
  const auto statement = json_text(provenance_statement(provenance));
  return {{kProvenanceFile, json_text(dsse_envelope(statement, signer ? &*signer : nullptr)) + "\n"},
          {kSbomFile, json_text(cyclonedx_sbom(provenance)) + "\n"}};
}

// The same build as a variant wheel (PEP 825): its public version, and
// .dist-info/variant.json naming what it holds, with that file beside it for
// the index; none when a target has no value in NVIDIA's provider (sm_90a).
std::optional<std::filesystem::path> make_variant_wheel(const std::filesystem::path& built, BuildRecord record,
                                                        const ArchList& holds, const CudaVersion& cuda,
                                                        const std::filesystem::path& dir) {
  auto features = nvidia_variant_features(holds, cuda);
  auto name = WheelName::parse(built.filename().string());
  if (!features || !name) return std::nullopt;
  const auto label = variant_label(*features);
  std::filesystem::create_directories(dir);
  const auto copy = dir / built.filename();
  std::filesystem::copy_file(built, copy, std::filesystem::copy_options::overwrite_existing);
  record.version = name->version;
  const auto document = json_text(variants_document({{label, *features}})) + "\n";
  auto rewritten = relabel_wheel(copy, "",
                                 {{BuildRecord::kFileName, json_text(record.to_json()) + "\n"},
                                  {"variant.json", document}});
  const auto target = dir / variant_file_name(rewritten.path.filename().string(), label);
  std::filesystem::rename(rewritten.path, target);
  write_whole_file(target.string() + ".json", document);
  return target;
}

// After a successful build: the local version label, validation, then
// publish (store entry + index) or quarantine. An interrupt during
// validation (its children die of the terminal's SIGINT too) publishes and
// quarantines nothing: the wheel was not judged.
Finish finish_wheels(const BuildContext& context, const BuildPlan& plan, const CacheKey& key,
                     const std::vector<std::string>& built, const std::map<std::string, std::string>& pinned,
                     const std::string& started_at, BuildReport& report, PipelineEvents& events) {
  // With the project's own arch flags kept, the label says what the wheel
  // holds (the first wheel's code), not what was asked.
  const auto labelled = plan.enforce_archs || built.empty() ? context.archs.list : archs_in_wheel(built.front());
  const auto label = local_version_label(context.host.toolchain.version(), labelled);
  // The key's inputs travel inside the wheel; --env values may be secrets
  // (a token for --allow-network): only their hashes go in.
  auto recorded_inputs = parse_key_text(key.text);
  for (auto& [name, value] : recorded_inputs)
    if (name.starts_with("env.")) value = "sha256:" + sha256_hex(value);
  std::vector<std::filesystem::path> wheels, variants;
  std::error_code ec;
  std::filesystem::remove_all(plan.out_dir / "variants", ec);  // an earlier build's
  for (const auto& wheel : built) {
    // What the wheel was built for travels inside it (.dist-info/archbuild.json).
    BuildRecord record{context.target.recipe->name,
                       {},
                       format_arch_list(context.archs.list, context.target.recipe->dialect),
                       labelled.canonical(),
                       context.host.toolchain.key_string(),
                       key.hash,
                       recorded_inputs};
    if (auto variant = make_variant_wheel(wheel, record, labelled, context.host.toolchain.version(),
                                          plan.out_dir / "variants")) {
      variants.push_back(*variant);
      events.stage("label", variant->filename().string() + " (variant wheel)");
    } else {
      events.stage("label", "no variant wheel: " + labelled.canonical() +
                                " has an a/f target, which NVIDIA's variant provider has no sm_arch value for");
    }
    if (auto name = WheelName::parse(std::filesystem::path(wheel).filename().string()))
      record.version = version_with_label(name->version, label);
    auto relabeled = relabel_wheel(wheel, label, {{BuildRecord::kFileName, json_text(record.to_json()) + "\n"}});
    wheels.push_back(relabeled.path);
    events.stage("label", relabeled.path.filename().string());
  }
  WheelStore store(context.cache.root());
  report.validated = !context.request.no_validate;
  bool valid = true;
  bool untestable = false;  // failed only because this machine could not test it
  if (context.request.no_validate) {
    events.stage("validate", "skipped (--no-validate, recorded in the manifest)", Tone::warning);
    report.validation_level = ValidationLevel::none;
  } else {
    report.validation_level = ValidationLevel::device;
    for (const auto& wheel : wheels) {
      events.stage("validate", wheel.filename().string() + " against " + context.archs.list.canonical());
      // With enforcement on, the label names the asked targets: code for other
      // compute capabilities would make it lie. Kept project flags label the
      // wheel by its code instead.
      WheelValidationRequest checks{wheel,       context.archs.list, context.target.recipe,
                                    plan.python, context.host.gpus,  plan.out_dir / "validate" / wheel.stem()};
      checks.allow_extra_archs = !plan.enforce_archs;
      checks.tests = context.tests;
      checks.tests_origin = context.tests_origin;
      checks.source_dir = plan.source_dir;
      auto validation = validate_wheel(checks);
      events.validation(validation);
      valid = valid && validation.ok();
      untestable = untestable || validation.device.failed_by_environment();
      auto entry = validation.to_json();
      entry["wheel"] = wheel.string();
      report.validation.push_back(entry);
      report.validation_scope = validation.scope();
      if (!validation.device.ran) report.validation_level = ValidationLevel::static_only;
    }
  }
  report.wheels = reported(wheels);
  report.local_version_label = label;
  if (pending_interrupt()) {
    events.stage("validate", "interrupted: nothing published or quarantined", Tone::warning);
    return Finish::interrupted;
  }
  if (!valid) {
    report.quarantine = store.quarantine(key, wheels, json_text(report.to_json()));
    if (untestable) {
      events.stage("validate",
                   "NOT PROVEN: this machine could not run the tests (see the failed checks: nothing says the wheel "
                   "is wrong); not published, the wheel and its report are in " +
                       report.quarantine->string(),
                   Tone::failure);
      return Finish::untestable_here;
    }
    events.stage("validate", "FAILED: not published; the wheel and its report are in " + report.quarantine->string(),
                 Tone::failure);
    return Finish::invalid;
  }
  report.published_at = utc_now();
  report.published = true;  // what the store's manifest says of itself
  // SIGINT/SIGTERM from the entry's rename into the store until the index
  // lists it are only recorded: an index one entry behind its store is what
  // `cache verify` would then report.
  std::optional<InterruptibleScope> whole_publish(std::in_place);
  // A rebuild replaces its key's entry, whose wheels may have other names:
  // then the whole index; else only what this entry adds (fleet-sized stores).
  const bool replaces = store.find(key).has_value();
  const auto manifest = json_text(report.to_json());
  auto entry = store.publish(key, wheels, manifest,
                             provenance_files(context, key, recorded_inputs, report, manifest, started_at, variants),
                             variants);
  report.store = entry.dir;
  const auto index_started = std::chrono::steady_clock::now();
  auto index = replaces ? refresh_cache_index(context.cache.root(), store)
                        : publish_to_cache_index(context.cache.root(), store, entry);
  report.build["index_seconds"] =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - index_started).count();
  whole_publish.reset();
  report.index = index.simple_dir;
  report.install = install_lines(entry.wheels, index.simple_dir, pinned);
  return Finish::published;
}

// Stops between stages when SIGINT/SIGTERM arrived (a matrix keeps running
// other cells' builds meanwhile, so the signal does not end the process).
bool stop_for_interrupt(BuildOutcome& outcome, PipelineEvents& events, const char* stage) {
  if (!pending_interrupt()) return false;
  events.stage(stage, "interrupted", Tone::warning);
  outcome.exit = ExitCode::interrupted;
  outcome.result.interrupted = true;
  return true;
}

// The last `limit` bytes of a file (a build log can be gigabytes).
std::string file_tail(const std::filesystem::path& file, size_t limit) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return {};
  in.seekg(0, std::ios::end);
  const auto size = static_cast<size_t>(std::max<std::streamoff>(0, in.tellg()));
  in.seekg(static_cast<std::streamoff>(size > limit ? size - limit : 0));
  std::string text(std::min(size, limit), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(std::max<std::streamsize>(0, in.gcount())));
  return text;
}

// An offline build that failed because it tried the network says so, and
// names the project's force-build switch when its setup.py has one.
void explain_network_failure(const BuildPlan& plan, BuildReport& report, PipelineEvents& events) {
  if (plan.network.rfind("off", 0) != 0) return;
  std::string setup_py;
  if (std::filesystem::is_regular_file(plan.source_dir / "setup.py"))
    setup_py = file_tail(plan.source_dir / "setup.py", 1 << 20);
  auto hint = network_failure_hint(file_tail(plan.log_path, 4 << 20), setup_py);
  if (hint.empty()) return;
  events.stage("build", hint, Tone::failure);
  report.build["network_hint"] = hint;
}

// The build step's times, for the next plan's forecast (a failed build's
// are not a build's).
void record_build_time(const BuildContext& context, const BuildPlan& plan, const BuildResult& result,
                       PipelineEvents& events) {
  // An OOM retry's wall holds the killed attempt, and its steps two ninja runs: not one build's time.
  if (result.oom_retries > 0) return;
  BuildTimeRecord record;
  record.recipe = plan.recipe;
  record.ref = plan.ref;
  record.arch_list = context.archs.list.canonical();
  record.compile_inputs = plan.compile_inputs;
  record.code_images = plan.code_images;
  record.parallelism = plan.jobs.compiles_at_once;
  record.nvcc_threads = plan.jobs.nvcc_threads;
  record.cores = cpu_count();
  record.compile_cache = !context.compiler_launcher.empty();
  record.warm = plan.forecast.warm;
  record.clean = plan.clean_build;
  record.wall_seconds = result.seconds;
  record.cpu_seconds = result.build_cpu_seconds;
  fill_step_times(record, result.steps, result.enforcement.outputs);
  record.tree_bytes = tree_bytes(plan.source_dir);
  record.finished_at = utc_now();
  try {
    append_build_history(context.cache.root(), record);
  } catch (const UserError& error) {
    // It costs the next forecast, not this build.
    events.stage("build", std::string("not recorded for the next forecast: ") + error.what(), Tone::warning);
  }
}

// What the build needs installed: the recipe's and the tree's requirements,
// and the wheels of the libraries this machine lacks.
std::vector<std::string> build_requirement_list(const BuildContext& context, const std::filesystem::path& tree,
                                                const std::map<std::string, FoundLibrary>& libraries,
                                                std::vector<std::string>& notes) {
  auto requirements = collect_build_requirements(*context.resolved.build, tree, context.target.recipe->depends_on,
                                                 notes);
  for (auto& wheel : library_wheel_requirements(context.target.recipe->system_libraries, libraries,
                                                context.host.toolchain.version().major))
    if (std::find(requirements.begin(), requirements.end(), wheel) == requirements.end())
      requirements.push_back(std::move(wheel));
  return requirements;
}

void write_report(const BuildPlan& plan, const BuildReport& report) {
  std::ofstream(plan.out_dir / "report.json") << json_text(report.to_json()) << "\n";
}

}  // namespace

PlannedBuild plan_build(const BuildRequest& request) {
  auto context = BuildContext::resolve(request);
  const auto python = context.settings.python().string();
  auto facts = gather_plan_facts(context.source_dir, python);
  facts.system_libraries = context.system_libraries();
  facts.build_history = read_build_history(context.cache.root(), context.target.recipe->name);
  // What the tree names, if it is checked out, and what the interpreter has
  // of it; nothing is installed (the build does that).
  std::vector<std::string> notes;
  auto requirements = build_requirement_list(context, context.source_dir, facts.system_libraries, notes);
  if (!requirements.empty()) {
    try {
      facts.build_requirements = probe_build_requirements(python, requirements);
    } catch (const UserError& error) {
      if (error.code() == ExitCode::bad_input) throw;
      for (const auto& requirement : requirements)
        facts.build_requirements.push_back({requirement, requirement_name(requirement), true, std::nullopt, false});
    }
  }
  auto plan = make_plan(context.plan_inputs(std::nullopt, python), facts);
  return {std::move(context), std::move(plan)};
}

BuildOutcome run_build(const BuildRequest& request, PipelineEvents& events) {
  auto context = BuildContext::resolve(request);
  // A signing key that cannot sign is refused before anything is built.
  if (const auto& key = context.settings.get("signing_key").value; !key.empty()) Ed25519Key::load_private(key);
  events.stage("archs", context.archs.list.canonical() + " (" + context.host.toolchain.describe() + ")" +
                            (context.archs_origin.empty()
                                 ? ""
                                 : ", the arch list of " + context.archs_origin + "; --arch picks another"));
  for (const auto& note : context.target.notes)
    events.stage("source", note, note.find("uncommitted") != std::string::npos ? Tone::warning : Tone::plain);
  MirrorCache mirrors(context.cache.root(), [&](const FetchProgress& p) {
    events.status().update("fetch " + p.name + ": " + std::to_string(p.received_objects) + "/" +
                           std::to_string(p.total_objects) + " objects");
  });
  // One build per work tree at a time: a second one (another arch list of
  // the same ref, say) waits rather than checking out under a running build.
  FileLock tree_lock(context.source_dir.string() + ".lock");
  if (tree_lock.waited()) events.stage("source", "waited for another build in " + context.source_dir.string());
  auto tree = checkout_source(context.checkout_request(), mirrors);
  events.stage("source", context.target.name + " " + tree.ref + " = " + tree.commit.substr(0, 12) + ", " +
                             std::to_string(tree.submodules.size()) + " submodules, " +
                             std::to_string(tree.patches.size()) + " patches");
  BuildOutcome outcome;
  if (stop_for_interrupt(outcome, events, "source")) return outcome;
  auto deps = resolve_dependencies(context, events,
                                   [&](const BuildRequest& dependency) { return run_build(dependency, events); });
  if (stop_for_interrupt(outcome, events, "deps")) return outcome;
  // The build's own requirements, installed now: the build step runs offline.
  // Libraries the machine lacks come from their wheels, installed with them.
  std::vector<std::string> requirement_notes;
  auto libraries = context.system_libraries();
  const auto requirements = build_requirement_list(context, tree.dir, libraries, requirement_notes);
  for (const auto& note : requirement_notes) events.stage("deps", note);
  const auto& recipe_libraries = context.target.recipe->system_libraries;
  const int cuda_major = context.host.toolchain.version().major;
  std::vector<RequirementStatus> requirement_status;
  if (!requirements.empty()) {
    auto build_env = ensure_build_requirements(deps.python, context.out_dir / "build-requirements", requirements,
                                               context.settings.offline());
    deps.python = build_env.python;
    deps.key_inputs.insert(build_env.key_inputs.begin(), build_env.key_inputs.end());
    requirement_status = build_env.status;
    events.stage("deps", build_env.description);
    find_wheel_libraries(recipe_libraries, libraries, deps.python, requirement_status,
                         context.out_dir / "library-links", cuda_major);
  }
  if (stop_for_interrupt(outcome, events, "deps")) return outcome;
  auto facts = gather_plan_facts(tree.dir, deps.python);
  facts.system_libraries = libraries;
  facts.build_history = read_build_history(context.cache.root(), context.target.recipe->name);
  facts.build_requirements = requirement_status;
  outcome.plan = make_plan(context.plan_inputs(tree, deps.python, &deps), facts);
  const auto& plan = outcome.plan;
  events.stage("plan",
               std::to_string(plan.jobs.jobs) + " jobs" +
                   (plan.jobs.parallelism.empty() ? "" : " (" + plan.jobs.parallelism + ")") +
                   (plan.jobs.nvcc_threads > 1 ? ", nvcc --threads " + std::to_string(plan.jobs.nvcc_threads) : "") +
                   ", TORCH_CUDA_ARCH_LIST=" + plan.arch_list +
                   (plan.cmake_fresh ? ", CMAKE_FRESH=1 (" + plan.cmake_fresh_reason + ")" : "") +
                   (plan.stale_outputs.empty() ? ""
                                               : ", removing " + std::to_string(plan.stale_outputs.size()) +
                                                     " stale setuptools outputs under build/"));
  auto key = CacheKey::compute(plan.key_inputs);
  std::filesystem::create_directories(plan.out_dir);
  std::ofstream(plan.out_dir / "key.txt") << key.text;  // `archbuild cache why` diffs these
  WheelStore store(context.cache.root());
  FileLock lock(store.lock_path(key));  // the same key building elsewhere: wait, then reuse
  if (lock.waited()) events.stage("cache", "waited for another build of the same key");

  auto& report = outcome.report;
  report.key = key.hash;
  report.plan = plan.to_json();
  report.source = tree.to_json();
  if (auto hit = store.find(key); hit && !request.rebuild) {
    events.stage("cache", "hit " + key.hash.substr(0, 16) + ": nothing to build");
    const auto published = hit->manifest.value_or(BuildReport{});
    auto index = cache_index_paths(context.cache.root());
    report.cache_hit = true;
    report.wheels = reported(hit->wheels);
    report.store = hit->dir;
    report.index = index.simple_dir;
    report.install = install_lines(hit->wheels, index.simple_dir, deps.from_cache);
    report.validation_level = published.validation_level;
    report.validation_scope = published.validation_scope;
    report.published = true;
    write_report(plan, report);
    return outcome;
  }
  events.stage("cache", "miss " + key.hash.substr(0, 16) + " (" + (plan.out_dir / "key.txt").string() + ")");

  prepare_launcher_shims(context, plan);
  const auto started_at = utc_now();
  if (plan.forecast.seconds)
    events.stage("build", "expected about " + format_duration(*plan.forecast.seconds) + ": " + plan.forecast.basis);
  outcome.result = execute_build(plan, events.status());
  auto& result = outcome.result;
  report.build = result.to_json(plan);
  if (plan.forecast.seconds) report.build["predicted_seconds"] = *plan.forecast.seconds;
  if (result.ok) record_build_time(context, plan, result, events);
  if (!result.ok && !result.interrupted) explain_network_failure(plan, report, events);
  auto finished = Finish::invalid;
  if (result.ok) {
    try {
      finished = finish_wheels(context, plan, key, result.wheels, deps.from_cache, started_at, report, events);
    } catch (...) {
      // A publish that failed (a full disk: exit 3, what it wrote removed)
      // still leaves the build's report, saying what was and was not published.
      if (!report.store) {
        report.published = false;
        report.published_at.clear();
      }
      write_report(plan, report);
      throw;
    }
    result.ok = finished == Finish::published;
    result.interrupted = finished == Finish::interrupted;
  }
  write_report(plan, report);
  if (result.interrupted)
    outcome.exit = ExitCode::interrupted;
  else if (finished == Finish::untestable_here)
    outcome.exit = ExitCode::environment;
  else
    outcome.exit = result.ok ? ExitCode::success : ExitCode::work_failed;
  return outcome;
}

}  // namespace archbuild
