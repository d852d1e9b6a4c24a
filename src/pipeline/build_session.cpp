#include "pipeline/build_session.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>

#include "builder/build_history.h"
#include "builder/build_requirements.h"
#include "builder/known_build_failures.h"
#include "builder/launcher_shims.h"
#include "builder/progress.h"
#include "builder/project_switches.h"
#include "builder/system_libraries.h"
#include "cache/build_publish.h"
#include "cache/cache_index.h"
#include "cache/cache_key.h"
#include "cache/install_lines.h"
#include "cache/provenance.h"
#include "cache/wheel_store.h"
#include "config/setting_names.h"
#include "core/cache_layout.h"
#include "core/error.h"
#include "core/file_lock.h"
#include "core/interrupt.h"
#include "core/json_text.h"
#include "core/log.h"
#include "core/regular_file.h"
#include "core/secrets.h"
#include "core/system_info.h"
#include "pipeline/dependency_resolver.h"
#include "process/run_process.h"
#include "validate/build_verdict.h"
#include "validate/project_tests.h"
#include "validate/static_validation.h"
#include "wheel/build_record.h"
#include "wheel/wheel_labelling.h"

namespace archbuild {

namespace {

std::vector<ReportedWheel> reported(const std::vector<std::filesystem::path>& wheels) {
  std::vector<ReportedWheel> list;
  for (const auto& wheel : wheels) list.push_back(ReportedWheel::of(wheel));
  return list;
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
  write_file_atomically(plan.out_dir / "report.json", json_text(report.to_json()) + "\n");
}

std::string describe_plan(const BuildPlan& plan) {
  return std::to_string(plan.jobs.jobs) + " jobs" +
         (plan.jobs.parallelism.empty() ? "" : " (" + plan.jobs.parallelism + ")") +
         (plan.jobs.nvcc_threads > 1 ? ", nvcc --threads " + std::to_string(plan.jobs.nvcc_threads) : "") +
         ", TORCH_CUDA_ARCH_LIST=" + plan.arch_list +
         (plan.configure.fresh ? ", CMAKE_FRESH=1 (" + plan.configure.reason + ")" : "") +
         (plan.configure.stale_outputs.empty() ? ""
                                               : ", removing " + std::to_string(plan.configure.stale_outputs.size()) +
                                                     " stale setuptools outputs under build/");
}

// `asked`, each target whose CC the wheel holds only in another variant
// (9.0 asked, sm_90a held) in that variant.
ArchList with_variants_held(const ArchList& asked, const ArchList& held) {
  ArchList out;
  for (auto target : asked.targets()) {
    const auto& in_wheel = held.targets();
    const bool plain_held = std::any_of(in_wheel.begin(), in_wheel.end(),
                                        [&](const ArchTarget& t) { return t.same_slot(target); });
    if (!plain_held)
      for (const auto& other : in_wheel)
        if (other.cc == target.cc) {
          target.variant = other.variant;
          break;
        }
    out.add(target);
  }
  return out;
}

// How the wheels of a successful build ended.
enum class Finish { published, invalid, untestable_here, interrupted };

// One build from its resolved context to its report, stage by stage. Every
// side effect outside the cache and out dirs goes through `services`.
class BuildSession {
 public:
  BuildSession(const BuildContext& context, PipelineEvents& events, SessionServices& services)
      : context_(context), events_(events), services_(services) {}

  BuildOutcome run() {
    for (const auto& item : context_.cuda_switches_set)
      outcome_.report.cuda_switches_set.emplace_back(item.name, item.value);
    announce();
    lock_work_tree();
    auto tree = checkout();
    if (interrupted("source")) return std::move(outcome_);
    auto deps = dependencies();
    if (interrupted("deps")) return std::move(outcome_);
    auto requirements = install_build_requirements(tree, deps);
    if (interrupted("deps")) return std::move(outcome_);
    plan(tree, deps, requirements);
    const auto key = CacheKey::compute(outcome_.plan.key_inputs());
    write_file_atomically(outcome_.plan.out_dir / "key.txt", key.text);  // `archbuild cache why` diffs these
    log::verbose("cache key {} ({} inputs, {})", key.hash, outcome_.plan.key_inputs().size(),
                 (outcome_.plan.out_dir / "key.txt").string());
    WheelStore store(context_.cache.root());
    FileLock lock(store.lock_path(key));  // the same key building elsewhere: wait, then reuse
    if (lock.waited()) events_.stage("cache", "waited for another build of the same key");
    outcome_.report.key = key.hash;
    outcome_.report.plan = outcome_.plan.to_json();
    outcome_.report.source = tree.to_json();
    auto hit = store.find(key);
    if (hit && !context_.intent.rebuild) return cache_hit(*hit, deps);
    log::verbose("cache: {}", hit ? "an entry of this key exists; --rebuild builds it again" : "no entry of this key");
    events_.stage("cache",
                  "miss " + key.hash.substr(0, 16) + " (" + (outcome_.plan.out_dir / "key.txt").string() + ")");
    plan_with_compile_cluster();
    build();
    finish(key, deps);
    return std::move(outcome_);
  }

 private:
  void announce() {
    const auto& archs = context_.archs;
    events_.stage("archs", archs.list.canonical() + " (" + context_.host.toolchain.describe() + ")" +
                               (context_.archs_origin.empty()
                                    ? ""
                                    : ", the arch list of " + context_.archs_origin + "; --arch picks another"));
    for (const auto& note : context_.target.notes) events_.stage("source", note);
    for (const auto& warning : context_.target.warnings) events_.stage("source", warning, Tone::warning);
  }

  // Stops between stages when SIGINT/SIGTERM arrived (a matrix keeps running
  // other cells' builds meanwhile, so the signal does not end the process).
  bool interrupted(const char* stage) {
    if (!pending_interrupt()) return false;
    events_.stage(stage, "interrupted", Tone::warning);
    outcome_.exit = ExitCode::interrupted;
    outcome_.result.interrupted = true;
    return true;
  }

  // One build per work tree (and so per out dir) at a time: a second one
  // (another arch list of the same ref, say) waits rather than checking out
  // under a running build. Then the debug log, which that build would
  // otherwise truncate: everything at debug level beside build.log,
  // whatever the terminal shows.
  void lock_work_tree() {
    tree_lock_.emplace(context_.source_dir.string() + ".lock");
    if (tree_lock_->waited()) events_.stage("source", "waited for another build in " + context_.source_dir.string());
    build_out_dir(context_.out_dir).claim();
    debug_log_.emplace(context_.out_dir / "archbuild-debug.log", log::DebugLogFile::Threads::this_thread);
    log::verbose("build {} {} for {} in {}", context_.target.name, context_.target.ref, context_.archs.list.canonical(),
                 context_.out_dir.string());
  }

  SourceTree checkout() {
    MirrorCache mirrors(context_.cache.root(), [&](const FetchProgress& p) {
      events_.status().update("fetch " + p.name + ": " + std::to_string(p.received_objects) + "/" +
                              std::to_string(p.total_objects) + " objects");
    });
    auto tree = services_.checkout(context_.checkout_request(), mirrors);
    events_.stage("source", context_.target.name + " " + tree.ref + " = " + tree.commit.substr(0, 12) + ", " +
                                std::to_string(tree.submodules.size()) + " submodules, " +
                                std::to_string(tree.patches.size()) + " patches");
    return tree;
  }

  DependencyEnv dependencies() {
    return resolve_dependencies(
        context_, events_, [&](const BuildRequest& dependency) { return run_build(dependency, events_, services_); },
        [&](const DependencyRequest& request) { return services_.prepare_dependencies(request); });
  }

  // The build's own requirements, installed now: the build step runs offline.
  // Libraries the machine lacks come from their wheels, installed with them.
  BuildRequirementsEnv install_build_requirements(const SourceTree& tree, DependencyEnv& deps) {
    std::vector<std::string> notes;
    libraries_ = context_.system_libraries();
    const auto requirements = build_requirement_list(context_, tree.project_dir(), libraries_, notes);
    for (const auto& note : notes) events_.stage("deps", note);
    BuildRequirementsEnv installed;
    if (requirements.empty()) return installed;
    installed = services_.install_build_requirements(deps.python, context_.out_dir / "build-requirements", requirements,
                                                     context_.settings.offline());
    deps.python = installed.python;
    events_.stage("deps", installed.description);
    find_wheel_libraries(context_.target.recipe->system_libraries, libraries_, deps.python, installed.status,
                         context_.out_dir / "library-links", context_.host.toolchain.version().major);
    return installed;
  }

  // archbuild's sccache server for this build, its link to the compile
  // cluster checked by a trial compile; it stops when the session ends.
  std::optional<ClusterConnection> connect_compile_cluster() {
    if (context_.compile_cluster.empty()) return std::nullopt;
    const auto request = context_.compile_cluster_request(context_.out_dir / "sccache",
                                                          build_temp_dir(context_.out_dir));
    events_.status().update("compile cluster: checking " + request.scheduler_url);
    cluster_ = services_.connect_compile_cluster(request);
    const auto& link = cluster_->connection();
    events_.stage("cluster", link.describe(), link.distributing ? Tone::plain : Tone::warning);
    log::verbose("compile cluster: {} ({}); archbuild's sccache server on 127.0.0.1:{}, log {}", link.status.describe(),
                 link.sccache_version, link.port, link.log.string());
    return link;
  }

  // The compiler that links the extension: one that links its own static libstdc++ gets the shared one (the plan's
  // LDFLAGS); where that cannot be done the build stops here, before hours
  // of compiling a wheel that would crash at torch's first exception.
  void check_cxx_runtime_link(PlanFacts& facts) {
    const auto compiler = extension_link_compiler(facts.cxx, context_.host_compiler
                                                                 ? context_.host_compiler->path.string()
                                                                 : std::string());
    if (compiler.empty()) return;
    facts.cxx_runtime = services_.cxx_runtime_link(compiler, context_.cache.cxx_runtime_links());
    const auto& link = *facts.cxx_runtime;
    log::verbose("C++ runtime: {}", link.summary());
    if (!link.failure.empty()) throw UserError(ExitCode::environment, link.summary());
    if (link.remedied() || !link.probed) events_.stage("compiler", link.summary(), Tone::warning);
  }

  void plan(const SourceTree& tree, const DependencyEnv& deps, const BuildRequirementsEnv& requirements) {
    auto& facts = plan_facts_;
    facts = services_.plan_facts(tree.project_dir(), deps.python);
    facts.system_libraries = libraries_;
    facts.build_history = read_build_history(context_.cache.root(), context_.target.recipe->name);
    facts.build_requirements = requirements.status;
    check_cxx_runtime_link(facts);
    plan_inputs_ = context_.plan_inputs(tree, deps.python, services_.network_isolation(), &deps, requirements.versions);
    outcome_.plan = make_plan(plan_inputs_, facts);
    events_.stage("plan", describe_plan(outcome_.plan));
    log_plan(outcome_.plan);
    std::filesystem::create_directories(outcome_.plan.out_dir);
  }

  // Only a build that compiles links to the compile cluster (a cache hit
  // needs no server, no trial compile, no token); the plan is made again
  // with what the link found. The key is the same: it has no part of it.
  void plan_with_compile_cluster() {
    plan_facts_.cluster = connect_compile_cluster();
    if (!plan_facts_.cluster) return;
    outcome_.plan = make_plan(plan_inputs_, plan_facts_);
    outcome_.report.plan = outcome_.plan.to_json();
    events_.stage("plan", describe_plan(outcome_.plan));
    log_plan(outcome_.plan);
  }

  // Every resolved setting of the plan, and where each part came from.
  static void log_plan(const BuildPlan& plan) {
    log::verbose("plan: {} ({})", plan.jobs.reason,
                 plan.jobs.parallelism.empty() ? "jobs at once" : plan.jobs.parallelism);
    log::verbose("plan: network {}", plan.network.description);
    log::verbose("plan: arch enforcement {}{}", plan.enforcement.on ? "on: " : "off",
                 plan.enforcement.on ? plan.enforcement.nvcc_targets : "");
    if (plan.configure.fresh) log::verbose("plan: CMAKE_FRESH=1: {}", plan.configure.reason);
    if (plan.cluster.configured) log::verbose("plan: compile cluster: {}", plan.cluster.description);
    for (const auto& toolkit : plan.launchers.toolkits)
      log::verbose("plan: launcher toolkit {} ({} over {})", toolkit.dir.string(),
                   toolkit.launcher.empty() ? "step launcher" : toolkit.launcher, toolkit.toolkit_root.string());
    for (const auto& [name, value] : plan.env) log::debug("plan: env {}={}", name, log::redact_env_value(name, value));
    for (const auto& [name, value] : plan.key_inputs())
      log::debug("plan: key {} {}", name, log::redact_env_value(name, value));
  }

  BuildOutcome cache_hit(const StoreEntry& hit, const DependencyEnv& deps) {
    log::verbose("cache: hit {} ({})", hit.hash, hit.dir.string());
    auto& report = outcome_.report;
    events_.stage("cache", "hit " + report.key.substr(0, 16) + ": nothing to build");
    const auto published = hit.manifest.value_or(BuildReport{});
    auto index = cache_index_paths(context_.cache.root());
    report.cache_hit = true;
    report.wheels = reported(hit.wheels);
    report.store = hit.dir;
    report.index = index.simple_dir;
    report.install = install_lines(hit.wheels, index.simple_dir, deps.from_cache);
    report.validation_level = published.validation_level;
    report.validation_scope = published.validation_scope;
    report.published = true;
    // A reused entry keeps the provenance it was published with: a key given now signs nothing.
    if (context_.signer && !provenance_is_signed(hit.dir))
      events_.stage("cache",
                    "--signing-key: the cached build was published unsigned and stays so (its provenance is "
                    "not rewritten); --rebuild publishes it signed",
                    Tone::warning);
    write_report(outcome_.plan, report);
    return std::move(outcome_);
  }

  // torch.utils.cpp_extension takes no compiler-launcher variable: the plan
  // names the shims that run the step launcher and the compiler launcher,
  // made here, where the build runs (planning writes nothing).
  void prepare_launcher_shims() {
    const auto& launchers = outcome_.plan.launchers;
    if (launchers.ccache_masquerade) ensure_ccache_masquerade(context_.cache.root());
    for (const auto& toolkit : launchers.toolkits) {
      std::filesystem::path launcher_path;
      if (!toolkit.launcher.empty()) launcher_path = find_on_path(toolkit.launcher).value_or(toolkit.launcher);
      ensure_launcher_toolkit(toolkit.dir, launchers.self_executable, launcher_path, toolkit.toolkit_root);
    }
  }

  void build() {
    const auto& plan = outcome_.plan;
    prepare_launcher_shims();
    started_at_ = services_.utc_now();
    if (plan.forecast.seconds)
      events_.stage("build", "expected about " + format_duration(*plan.forecast.seconds) + ": " + plan.forecast.basis);
    outcome_.result = execute_build(plan, events_.build_progress(), services_.build_runner());
    const auto& result = outcome_.result;
    auto& report = outcome_.report;
    report.build = result.to_json(plan);
    if (plan.forecast.seconds) report.build["predicted_seconds"] = *plan.forecast.seconds;
    report_cluster_compiles();
    if (result.ok) record_build_time();
    if (!result.ok && !result.interrupted) explain_failure();
  }

  // Where the compiles ran (sccache's counts of archbuild's own server).
  void report_cluster_compiles() {
    if (!cluster_) return;
    auto& entry = outcome_.report.build["compile_cluster"];
    entry = cluster_->connection().to_json();
    try {
      const auto counts = cluster_->counts();
      entry["compiles"] = counts.to_json();
      events_.stage("cluster", "compiles: " + counts.describe(), counts.dist_errors ? Tone::warning : Tone::plain);
    } catch (const std::exception& error) {
      entry["compiles_error"] = error.what();
      events_.stage("cluster", std::string("compile counts unavailable: ") + error.what(), Tone::warning);
    }
  }

  // The build step's times, for the next plan's forecast (a failed build's
  // are not a build's; an OOM retry's wall holds the killed attempt).
  void record_build_time() {
    const auto& plan = outcome_.plan;
    const auto& result = outcome_.result;
    if (result.oom_retries > 0) return;
    BuildTimeRecord record;
    record.recipe = plan.recipe;
    record.source = context_.target.identity();
    record.ref = plan.ref;
    record.arch_list = context_.archs.list.canonical();
    record.compile_inputs = plan.compile_inputs;
    record.code_images = plan.code_images;
    record.parallelism = plan.jobs.compiles_at_once;
    record.nvcc_threads = plan.jobs.nvcc_threads;
    record.cores = cpu_count();
    record.compile_cache = plan.launchers.compiler_launcher != CompilerLauncher::none;
    record.warm = plan.forecast.warm;
    record.clean = plan.clean_build;
    record.wall_seconds = result.seconds;
    record.cpu_seconds = result.build_cpu_seconds;
    fill_step_times(record, result.steps, result.enforcement.outputs);
    record.tree_bytes = tree_bytes(plan.source_dir);
    record.finished_at = services_.utc_now();
    try {
      append_build_history(context_.cache.root(), record);
    } catch (const UserError& error) {
      // It costs the next forecast, not this build.
      events_.stage("build", std::string("not recorded for the next forecast: ") + error.what(), Tone::warning);
    }
  }

  // A failed build whose log shows a cause archbuild knows (an API the
  // toolkit or torch removed) says so; an offline one that tried the network
  // says that, naming the project's force-build switch when its setup.py has one.
  void explain_failure() {
    const auto& plan = outcome_.plan;
    const auto log_text = file_tail(plan.log_path, 4 << 20);
    if (auto cause = known_build_failure_hint(log_text); !cause.empty()) {
      events_.stage("build", cause, Tone::failure);
      outcome_.report.build["known_cause"] = cause;
    }
    if (!plan.network.offline) return;
    std::string setup_py;
    if (std::filesystem::is_regular_file(plan.source_dir / "setup.py"))
      setup_py = file_tail(plan.source_dir / "setup.py", 1 << 20);
    auto hint = network_failure_hint(log_text, setup_py);
    if (hint.empty()) return;
    events_.stage("build", hint, Tone::failure);
    outcome_.report.build["network_hint"] = hint;
  }

  void finish(const CacheKey& key, const DependencyEnv& deps) {
    auto& result = outcome_.result;
    auto& report = outcome_.report;
    auto finished = Finish::invalid;
    if (result.ok) {
      try {
        finished = finish_wheels(key, deps);
      } catch (...) {
        // A publish that failed (a full disk: exit 3, what it wrote removed)
        // still leaves the build's report, saying what was and was not published.
        if (!report.store) {
          report.published = false;
          report.published_at.clear();
        }
        try {
          write_report(outcome_.plan, report);
        } catch (const std::exception&) {
          // the publish's own error is the one to report (a full disk fails both)
        }
        throw;
      }
      result.ok = finished == Finish::published;
      result.interrupted = finished == Finish::interrupted;
    }
    write_report(outcome_.plan, report);
    if (finished == Finish::published && pending_interrupt()) {
      // The signal came while the publish held it: the entry and the index are
      // consistent and stay published; the command still says it was stopped.
      events_.stage("publish",
                    "interrupted after the publish completed: the build is published and the index "
                    "lists it",
                    Tone::warning);
      outcome_.exit = ExitCode::interrupted;
    } else if (result.interrupted)
      outcome_.exit = ExitCode::interrupted;
    else if (finished == Finish::untestable_here)
      outcome_.exit = ExitCode::environment;
    else
      outcome_.exit = result.ok ? ExitCode::success : ExitCode::work_failed;
  }

  // After a successful build: the local version label, validation, then
  // publish (store entry + index) or quarantine. An interrupt during
  // validation (its children die of the terminal's SIGINT too) publishes and
  // quarantines nothing: the wheel was not judged.
  Finish finish_wheels(const CacheKey& key, const DependencyEnv& deps) {
    auto& report = outcome_.report;
    if (context_.settings.portable())
      if (const auto stopped = repair_wheels(key)) return *stopped;
    const auto labelled = label(key);
    const auto verdict = validate(labelled.wheels);
    report.wheels = reported(labelled.wheels);
    report.local_version_label = labelled.label;
    if (pending_interrupt()) {
      events_.stage("validate", "interrupted: nothing published or quarantined", Tone::warning);
      return Finish::interrupted;
    }
    if (verdict != Verdict::valid) {
      report.quarantine =
          WheelStore(context_.cache.root()).quarantine(key, labelled.wheels, json_text(report.to_json()));
      log::verbose("quarantined in {}", report.quarantine->string());
      if (verdict == Verdict::untestable_here) {
        events_.stage("validate",
                      "NOT PROVEN: this machine could not run the tests (see the failed checks: nothing says the "
                      "wheel is wrong); not published, the wheel and its report are in " +
                          report.quarantine->string(),
                      Tone::failure);
        return Finish::untestable_here;
      }
      events_.stage("validate", "FAILED: not published; the wheel and its report are in " + report.quarantine->string(),
                    Tone::failure);
      return Finish::invalid;
    }
    report.published_at = services_.utc_now();
    report.published = true;  // what the store's manifest says of itself
    const auto& signer = context_.signer;
    const PublishOrigin origin{context_.target.url, started_at_, services_.host_name(), signer ? &*signer : nullptr};
    auto entry = publish_build(context_.cache.root(), key, recorded_inputs(key), labelled.wheels, labelled.variants,
                               origin, report);
    report.install = install_lines(entry.wheels, *report.index, deps.from_cache);
    log::verbose("published {} ({} wheels, {} variant wheels); index {}", entry.dir.string(), entry.wheels.size(),
                 labelled.variants.size(), report.index->string());
    return Finish::published;
  }

  // The portable setting: each built wheel replaced by its repair (libraries
  // met only here bundled, tagged manylinux) before it is labelled, so the
  // label, the variants, validation and the index all see the repaired one.
  // False when one could not be repaired: it is kept, with its report, in
  // the quarantine: invalid, or not proven when only this machine stopped it
  // (no auditwheel offline).
  std::optional<Finish> repair_wheels(const CacheKey& key) {
    auto& report = outcome_.report;
    auto& built = outcome_.result.wheels;
    const auto tool = services_.audit_tool(outcome_.plan.python, context_.cache.root() / "tools",
                                           context_.settings.offline());
    bool repaired_all = true, environment_only = true;
    for (auto& wheel : built) {
      const std::filesystem::path original = wheel;
      auto repair = services_.repair_wheel(outcome_.plan.python, tool, original,
                                           outcome_.plan.out_dir / "repaired" / original.stem());
      report.repair.push_back(repair.to_json());
      if (!repair.ok()) {
        events_.stage("repair", original.filename().string() + ": " + repair.summary(), Tone::failure);
        repaired_all = false;
        environment_only = environment_only && repair.environment;
        continue;
      }
      events_.stage("repair", original.filename().string() + ": " + repair.summary());
      log::verbose("repaired {} into {} (left to their own wheels: {})", original.string(), repair.wheel.string(),
                   repair.excluded.empty() ? std::string("none") : join(repair.excluded, ", "));
      if (repair.wheel == original) continue;  // nothing to repair: it stays as it is
      // The repaired wheel takes the built one's place in the wheel dir: moved
      // in first, the built one removed after, never over another wheel.
      const auto placed = original.parent_path() / repair.wheel.filename();
      std::error_code ec;
      if (placed != original && std::filesystem::exists(std::filesystem::symlink_status(placed, ec))) {
        events_.stage("repair", placed.string() + " is there already: the repaired wheel would replace it",
                      Tone::failure);
        repaired_all = environment_only = false;
        continue;
      }
      std::filesystem::rename(repair.wheel, placed, ec);
      if (ec) {
        events_.stage("repair", "cannot move " + repair.wheel.string() + " to " + placed.string() + ": " + ec.message(),
                      Tone::failure);
        repaired_all = environment_only = false;
        continue;
      }
      if (placed != original) std::filesystem::remove(original, ec);
      wheel = placed.string();
    }
    if (repaired_all) return std::nullopt;
    std::vector<std::filesystem::path> kept(built.begin(), built.end());
    report.quarantine = WheelStore(context_.cache.root()).quarantine(key, kept, json_text(report.to_json()));
    events_.stage("repair",
                  std::string(environment_only ? "NOT PROVEN (--portable: this machine could not repair it)"
                                               : "FAILED (--portable)") +
                      ": not published; the wheel and its report are in " + report.quarantine->string(),
                  Tone::failure);
    return environment_only ? Finish::untestable_here : Finish::invalid;
  }

  // The key's inputs as they travel inside the wheel and its provenance.
  static KeyInputs recorded_inputs(const CacheKey& key) { return KeyInputs::parse(key.text).with_secrets_hashed(); }

  LabelledWheels label(const CacheKey& key) {
    const auto& plan = outcome_.plan;
    const auto& built = outcome_.result.wheels;
    std::vector<std::filesystem::path> wheels(built.begin(), built.end());
    // With the project's own arch flags kept, the label says what the wheel
    // holds (the first wheel's code), not what was asked. Enforced, it is
    // the asked list, each target in the variant the wheel holds it in: a
    // project that asks sm_90a for its 9.0 kernels keeps the `a`, and the
    // label and the variant wheel's properties say sm90a, not sm90.
    const auto holds = wheels.empty()        ? context_.archs.list
                       : plan.enforcement.on ? with_variants_held(context_.archs.list, archs_in_wheel(wheels.front()))
                                             : archs_in_wheel(wheels.front());
    const BuildRecord record{context_.target.recipe->name,
                             {},
                             format_arch_list(context_.archs.list, context_.target.recipe->dialect),
                             holds,
                             context_.host.toolchain.key_string(),
                             key.hash,
                             recorded_inputs(key).values()};
    auto labelled = label_wheels(wheels, record, holds, context_.host.toolchain.version(), plan.out_dir / "variants");
    for (const auto& note : labelled.notes) events_.stage("label", note);
    return labelled;
  }

  Verdict validate(const std::vector<std::filesystem::path>& wheels) {
    const auto& plan = outcome_.plan;
    auto& report = outcome_.report;
    const auto& policy = context_.intent.validation;
    report.validated = policy.validate;
    if (!policy.validate) {
      events_.stage("validate", "skipped (--no-validate, recorded in the manifest)", Tone::warning);
      report.validation_level = ValidationLevel::none;
      return Verdict::valid;
    }
    VerdictTally tally;
    // One auditwheel for the cache, installed by the first build that audits.
    const auto audit_tool = services_.audit_tool(plan.python, context_.cache.root() / "tools",
                                                 context_.settings.offline());
    // The previous build's validation dirs go first: they are the out dir's
    // ("validate" is among the names its marker lists), and one an older
    // archbuild left may lack the mark each validation dir now carries.
    std::error_code cleared;
    std::filesystem::remove_all(plan.out_dir / "validate", cleared);  // a link is removed, not followed
    if (cleared) fail_environment("cannot clear " + (plan.out_dir / "validate").string() + ": " + cleared.message());
    for (const auto& wheel : wheels) {
      events_.stage("validate", wheel.filename().string() + " against " + context_.archs.list.canonical());
      // With enforcement on, the label names the asked targets: code for other
      // compute capabilities would make it lie. Kept project flags label the
      // wheel by its code instead.
      WheelValidationRequest checks{wheel,       context_.archs.list, context_.target.recipe,
                                    plan.python, context_.host.gpus,  plan.out_dir / "validate" / wheel.stem()};
      checks.allow_extra_archs = !plan.enforcement.on;
      checks.tests = context_.tests;
      checks.tests_origin = context_.tests_origin;
      if (!checks.tests) {
        // The project's own suite, found in its tree: report-only unless --max-failed-tests sets a budget.
        checks.tests = find_project_tests(plan.source_dir, checks.tests_origin);
        if (checks.tests) {
          if (const auto& timeout = policy.test_timeout_seconds) checks.tests->timeout_seconds = *timeout;
          if (const auto& budget = policy.max_failed_tests) {
            checks.tests->max_failed_tests = *budget;
            checks.tests->report_only = false;
          }
        }
      }
      checks.source_dir = plan.source_dir;
      checks.tree_dir = context_.source_dir;
      checks.require_kernel_launch = context_.settings.require_kernel_launch();
      checks.test_dependencies = context_.test_dependencies;
      checks.audit_tool = audit_tool;
      checks.portable = context_.settings.portable();
      auto validation = services_.validate(checks);
      events_.validation(validation);
      tally.add(wheel, validation);
      if (validation.static_checks.libraries.empty() && outcome_.cuda_switches_found.set.empty())
        outcome_.cuda_switches_found = validation.static_checks.cuda_switches;
    }
    const auto& verdict = tally.verdict();
    report.validation = verdict.findings;
    report.validation_scope = verdict.scope;
    report.validation_level = proven_level(verdict.device_ran, verdict.kernels_launched, verdict.results_compared);
    return verdict.verdict;
  }

  const BuildContext& context_;
  PipelineEvents& events_;
  SessionServices& services_;
  BuildOutcome outcome_;
  std::optional<FileLock> tree_lock_;
  std::unique_ptr<CompileCluster> cluster_;  // archbuild's sccache server while the build runs
  PlanInputs plan_inputs_;
  PlanFacts plan_facts_;
  std::optional<log::DebugLogFile> debug_log_;  // after the lock: released before it
  std::map<std::string, FoundLibrary> libraries_;
  std::string started_at_;
};

}  // namespace

PlannedBuild plan_build(const BuildRequest& request) {
  auto context = BuildContext::resolve(request, BuildContext::CacheUse::plan);
  const auto python = context.settings.python().string();
  SystemServices machine;  // a plan reads the machine as a build would, and runs nothing
  auto facts = machine.plan_facts(context.project_dir(), python);
  facts.system_libraries = context.system_libraries();
  facts.build_history = read_build_history(context.cache.root(), context.target.recipe->name);
  // What the tree names, if it is checked out, and what the interpreter has
  // of it; nothing is installed (the build does that).
  std::vector<std::string> notes;
  auto requirements = build_requirement_list(context, context.project_dir(), facts.system_libraries, notes);
  if (!requirements.empty()) {
    try {
      facts.build_requirements = probe_build_requirements(python, requirements);
    } catch (const UserError& error) {
      if (error.code() == ExitCode::bad_input) throw;
      for (const auto& requirement : requirements)
        facts.build_requirements.push_back({requirement, requirement_name(requirement), true, std::nullopt, false});
    }
  }
  // Where compiles would go: the link checked as a build checks it; the
  // build starts a server of its own.
  if (!context.compile_cluster.empty())
    facts.cluster = probe_compile_cluster(context.compile_cluster_request({}, {}), "plan");
  auto plan = make_plan(context.plan_inputs(std::nullopt, python, machine.network_isolation()), facts);
  return {std::move(context), std::move(plan)};
}

namespace {

// The switches a CPU-only result asks for, when archbuild may set them: the
// user did not turn this off, did not set one that turns CUDA off (with
// --env or in the environment the build inherits: then the CPU variant is
// what was asked), and they are not set to these values already (a second
// build that still has no CUDA code is not tried again).
std::vector<EnvSwitch> switches_to_set(const BuildOutcome& outcome, const BuildContext& context) {
  if (outcome.exit != ExitCode::work_failed || !context.intent.set_cuda_switches) return {};
  const auto& found = outcome.cuda_switches_found;
  for (const auto& name : found.kept_off) {
    const char* inherited = std::getenv(name.c_str());
    if (context.extra_env.contains(name) || (inherited && *inherited)) return {};
  }
  auto wanted = found.set;
  // No switch, but the condition asks torch for a GPU: torch answers as one of the highest asked CC would.
  if (wanted.empty() && found.gpu_query && !context.archs.list.empty())
    wanted.push_back({kStepGpuVariable, context.archs.list.targets().back().cc.dotted()});
  // One the user set to another value (FORCE_CUDA=0, ARCHBUILD_STEP_GPU_CC=8.0) is theirs: not overridden.
  for (const auto& item : wanted)
    if (auto set = context.extra_env.find(item.name); set != context.extra_env.end() && set->second != item.value)
      return {};
  const bool all_set = std::all_of(wanted.begin(), wanted.end(),
                                   [&](const EnvSwitch& item) { return context.extra_env.contains(item.name); });
  return all_set ? std::vector<EnvSwitch>{} : wanted;
}

std::string spelled(const std::vector<EnvSwitch>& switches) {
  std::vector<std::string> words;
  for (const auto& item : switches) words.push_back(item.name + "=" + item.value);
  return join(words, " ");
}

}  // namespace

BuildOutcome run_build(const BuildRequest& request, PipelineEvents& events, SessionServices& services) {
  auto context = BuildContext::resolve(request);
  secrets::use_cache_secret(context.cache.root());  // made now if the cache has none: what the build stores uses it
  // A signing key that cannot sign is refused before anything is built; the
  // publish signs with this copy, read once.
  if (const auto& key = context.settings.get(setting_name::signing_key).value; !key.empty())
    context.signer = Ed25519Key::load_private(key);
  auto outcome = BuildSession(context, events, services).run();
  const auto switches = switches_to_set(outcome, context);
  if (switches.empty()) return outcome;
  // CUDA archs were asked, and the project built its CPU-only variant: its
  // setup.py names the switches that build the CUDA code. Set, they are --env
  // values like any other (in the key, in the report).
  const bool gpu_view = switches.front().name == kStepGpuVariable;
  events.stage("build",
               gpu_view ? "no CUDA code in the wheel: its setup.py builds it only when torch sees a GPU, which the "
                          "build step never does; building again with torch answering as one GPU of compute "
                          "capability " +
                              switches.front().value + " would (" + spelled(switches) + "; --no-cuda-switches: do not)"
                        : "no CUDA code in the wheel: its setup.py builds it only with " + spelled(switches) +
                              "; building again with them set (--no-cuda-switches: do not)",
               Tone::warning);
  for (const auto& item : switches) context.extra_env[item.name] = item.value;
  context.cuda_switches_set = switches;
  return BuildSession(context, events, services).run();
}

BuildOutcome run_build(const BuildRequest& request, PipelineEvents& events) {
  SystemServices services;
  return run_build(request, events, services);
}

}  // namespace archbuild
