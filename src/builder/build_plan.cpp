#include "builder/build_plan.h"

#include <algorithm>

#include "builder/project_switches.h"
#include "core/secrets.h"
#include "core/strings.h"

namespace archbuild {

bool runs_parallel_frontend(const BuildStep& build, const std::map<std::string, std::string>& extra_env) {
  for (const auto* env : {&extra_env, &build.env})
    if (auto off = env->find("ARCHBUILD_PARALLEL_SETUPTOOLS"); off != env->end()) {
      if (off->second == "0") return false;
      break;  // --env wins over the recipe
    }
  return std::any_of(build.command.begin(), build.command.end(),
                     [](const std::string& word) { return word.ends_with("recipes/frontends/pep517_wheel.py"); });
}

namespace {

size_t code_images_of(const ArchList& archs) {
  size_t images = 0;
  for (const auto& target : archs.targets()) images += (target.sass ? 1 : 0) + (target.ptx ? 1 : 0);
  return images;
}

JobPlan plan_build_jobs(const PlanInputs& in, const PlanFacts& facts, const CompileClusterPlan& cluster) {
  JobInputs jobs;
  jobs.cores = facts.cores;
  jobs.available_memory_bytes = facts.available_memory_bytes;
  jobs.job_memory_gb = in.recipe->job_memory_gb;
  jobs.jobs_override = in.jobs_override;
  jobs.compile_units = facts.cuda_files;
  jobs.one_file_at_a_time = facts.one_file_at_a_time;
  jobs.parallel_setuptools = runs_parallel_frontend(*in.resolved.build, in.extra_env);
  jobs.arch_count = code_images_of(in.archs);
  jobs.cluster_cpus = cluster.cluster_cpus;
  return plan_jobs(jobs);
}

void set_jobs(std::map<std::string, std::string>& env, unsigned jobs) {
  env["MAX_JOBS"] = std::to_string(jobs);
  env["CMAKE_BUILD_PARALLEL_LEVEL"] = std::to_string(jobs);
}

// What PyTorch's build (and cpp_extension) read besides the recipe's and the
// launchers' variables (docs/CUDA_FACTS.md): arch list, jobs, the toolkit,
// the host compiler, and PATH with the toolkit and a build venv first.
std::map<std::string, std::string> base_environment(const PlanInputs& in, const PlanFacts& facts, const BuildPlan& plan,
                                                    const std::map<std::string, std::string>& before) {
  std::map<std::string, std::string> env;
  env["TORCH_CUDA_ARCH_LIST"] = plan.arch_list;
  set_jobs(env, plan.jobs.jobs);
  env["USE_NINJA"] = "1";
  env["PYTHONUNBUFFERED"] = "1";  // build output arrives as it happens
  env["TMPDIR"] = build_temp_dir(in.out_dir).string();
  if (const auto* remedy = facts.cxx_runtime_remedy()) {
    // After a recipe's, --env's or the caller's flags; before the compiler's own dirs.
    const auto given = before.find("LDFLAGS");
    const std::string flags = given != before.end() ? given->second : facts.ldflags;
    env["LDFLAGS"] = (flags.empty() ? "" : flags + " ") + join(remedy->ldflags, " ");
  }
  // The step sees no GPU: what it builds follows the asked arch list, never
  // the builder's GPUs (the key does not name them), and a setup.py that
  // asks torch for them (torch.cuda.device_count(), is_available()) gets
  // the answer a GPU-less builder gets. A recipe or --env may set its own.
  if (!before.count("CUDA_VISIBLE_DEVICES")) env["CUDA_VISIBLE_DEVICES"] = "";
  // One source, one set of wheel bytes however often it is built: the build
  // backend (wheel, setuptools) stamps zip members with SOURCE_DATE_EPOCH
  // instead of the clock. The commit's time, at least the first a zip file
  // can hold (1980: archbuild's own commits of an sdist or a directory are
  // at 0). Known once the source is checked out; a recipe or --env may set it.
  constexpr std::int64_t kFirstZipTime = 315532800;  // 1980-01-01T00:00:00Z
  if (in.source && !before.count("SOURCE_DATE_EPOCH"))
    env["SOURCE_DATE_EPOCH"] = std::to_string(std::max(in.source->commit_time, kFirstZipTime));
  // ... unless it is to answer as one GPU of a compute capability would (project_switches.h).
  if (before.count(kStepGpuVariable)) {
    // after the PYTHONPATH the step would have had: a recipe's or --env's, else the caller's
    const auto given_path = before.find("PYTHONPATH");
    const std::string after = given_path != before.end() ? given_path->second : facts.pythonpath;
    env["PYTHONPATH"] = (facts.data_dir / "recipes" / "frontends" / "gpu_view").string() +
                        (after.empty() ? "" : ":" + after);
  }
  auto given = before.find("PATH");  // a recipe's own PATH, which the toolkit's would replace
  std::string path = given != before.end() ? given->second : facts.path;
  if (in.toolchain->installed) {
    env["CUDA_HOME"] = env["CUDA_PATH"] = in.toolchain->installed->root.string();
    env["CUDACXX"] = env["CMAKE_CUDA_COMPILER"] = in.toolchain->installed->nvcc.string();
    path = (in.toolchain->installed->root / "bin").string() + (facts.path.empty() ? "" : ":" + facts.path);
    env["PATH"] = path;
  }
  // A venv archbuild made for this build (build requirements: cmake, ninja)
  // is first on PATH, as an activated venv is: the build finds its tools.
  const auto python_bin = std::filesystem::path(in.python).parent_path();
  if (const auto inside = python_bin.lexically_relative(in.out_dir);
      !in.python.empty() && !inside.empty() && *inside.begin() != "..")
    env["PATH"] = python_bin.string() + (path.empty() ? "" : ":" + path);
  if (in.host) env["CUDAHOSTCXX"] = in.host->path.string();
  if (plan.jobs.nvcc_threads > 1) env["NVCC_APPEND_FLAGS"] = "--threads " + std::to_string(plan.jobs.nvcc_threads);
  return env;
}

void overlay(std::map<std::string, std::string>& env, const std::map<std::string, std::string>& over) {
  for (const auto& [key, value] : over) env[key] = value;
}

KeyFields key_fields(const PlanInputs& in, const PlanFacts& facts, const BuildPlan& plan) {
  KeyFields key;
  key.recipe = in.recipe->name;
  key.recipe_sha256 = in.recipe->file_sha256;
  key.ref = plan.ref;
  key.arch_list = plan.arch_list;
  key.arch_dialect = to_string(plan.dialect);
  key.arch_enforcement = in.enforce_archs;
  key.cuda = in.toolchain->key_string();
  key.host_compiler = in.host ? in.host->kind + " " + in.host->version : "unknown";
  // Its static libstdc++ replaced by the shared one: other binaries than the compiler's default.
  if (facts.cxx_runtime_remedy()) key.host_compiler += ", shared libstdc++ linked by archbuild";
  key.python_tag = facts.python_tag;
  key.host_machine = facts.machine;
  key.build_system = plan.build_system;
  key.build_command = join(in.resolved.build->command, " ");
  // Secrets change the key without being readable from it (core/secrets.h).
  key.build_env = secrets::recorded_env(plan.recipe_env.key_text);
  key.extra_env = secrets::recorded_env(in.extra_env);
  if (in.source) {
    KeySource source;
    source.commit = in.source->commit;
    if (in.source->sdist) source.sdist_sha256 = in.source->sdist->sha256;  // pypi:NAME==VERSION
    source.subdirectory = in.source->subdirectory;
    if (in.source->snapshot && in.source->snapshot->kind == LocalSnapshot::Kind::working_tree) {
      source.base_commit = in.source->snapshot->base_commit;
      source.edits_sha256 = in.source->snapshot->edits_sha256;
    }
    for (const auto& sub : in.source->submodules) source.submodules[sub.path] = sub.commit;
    for (const auto& patch : in.source->patches)
      source.patches[std::filesystem::path(patch.file).filename().string()] = patch.sha256;
    key.source = std::move(source);
  }
  key.dependencies = in.dependencies;
  key.build_requirements = in.build_requirements;
  key.portable = in.portable;
  return key;
}

std::vector<std::string> describe_requirements(const std::vector<RequirementStatus>& requirements) {
  std::vector<std::string> lines;
  for (const auto& requirement : requirements)
    lines.push_back(
        requirement.requirement + ": " +
        (!requirement.applies ? "not for this machine (marker)"
         : requirement.satisfied
             ? *requirement.installed
             : (requirement.installed ? *requirement.installed + " does not satisfy it, " : std::string("missing, ")) +
                   "installed into a build venv before the build step"));
  return lines;
}

// The build's time, disk and memory (after the cache key's inputs).
void forecast_needs(BuildPlan& plan, const PlanInputs& in, const PlanFacts& facts) {
  plan.code_images = std::max<size_t>(1, code_images_of(in.archs));
  // Known before the checkout too (`archbuild plan`): the ref stands for its commits.
  plan.compile_inputs = plan.key.compile_inputs_digest();
  ForecastRequest request;
  request.recipe = plan.recipe;
  request.source = in.source_identity;
  request.ref = plan.ref;
  request.compile_inputs = plan.compile_inputs;
  request.code_images = plan.code_images;
  request.parallelism = plan.jobs.compiles_at_once;
  request.nvcc_threads = plan.jobs.nvcc_threads;
  request.cores = facts.cores;
  request.compile_cache = in.compiler_launcher != CompilerLauncher::none;
  plan.clean_build = (!facts.has_cmake_build_dir && facts.setuptools_outputs.empty()) ||
                     (plan.configure.fresh && !in.resolved.build->fresh_configure_removes.empty());
  request.clean = plan.clean_build;
  request.estimate = in.recipe->estimate;
  plan.forecast = forecast_build_time(facts.build_history, request);
  // With a compile cluster, what stays here per job is its local part.
  plan.peak_memory_gb = plan.jobs.compiles_at_once *
                        (plan.cluster.distributing ? kDistributedJobLocalMemoryGb : in.recipe->job_memory_gb);
  for (const auto& record : facts.build_history)
    if (record.ref == plan.ref && record.tree_bytes > 0) {
      plan.disk_bytes = record.tree_bytes;
      plan.disk_basis = "the work tree after the last build of " + plan.ref;
    }
  if (!plan.disk_bytes && in.recipe->estimate && in.recipe->estimate->disk_gb > 0) {
    plan.disk_bytes = static_cast<uint64_t>(in.recipe->estimate->disk_gb * (1ull << 30));
    plan.disk_basis = "the recipe's estimate";
  }
}

}  // namespace

BuildPlan make_plan(const PlanInputs& in, const PlanFacts& facts) {
  BuildPlan plan;
  plan.package = in.package;
  plan.python = in.python;
  plan.recipe = in.recipe->name;
  plan.ref = in.resolved.ref;
  plan.build_system = in.resolved.build->system;
  plan.source_dir = in.source_dir;
  plan.out_dir = in.out_dir;
  plan.wheel_dir = in.out_dir / "wheels";
  plan.log_path = in.out_dir / "build.log";
  plan.trace_path = in.out_dir / "trace.json";
  plan.dialect = in.recipe->dialect;
  plan.arch_list = format_arch_list(in.archs, plan.dialect);
  plan.job_memory_gb = in.recipe->job_memory_gb;
  plan.inherited_path = facts.path;
  if (const auto* remedy = facts.cxx_runtime_remedy()) plan.cxx_runtime = remedy->summary();
  for (const auto& word : in.resolved.build->command)
    plan.argv.push_back(substitute_plan_paths(word, in, facts, plan.wheel_dir));

  // The parts, each a pure step; the environment is their sum, later parts
  // over earlier ones.
  plan.cluster = plan_compile_cluster(in, facts);
  plan.jobs = plan_build_jobs(in, facts, plan.cluster);
  plan.recipe_env = plan_recipe_environment(in, facts, plan.wheel_dir);
  overlay(plan.env, plan.recipe_env.env);
  overlay(plan.env, in.extra_env);
  overlay(plan.env, base_environment(in, facts, plan, plan.env));
  plan.enforcement = plan_arch_enforcement(in, facts);
  plan.launchers = plan_compiler_launchers(in, facts, plan.enforcement, plan.env);
  overlay(plan.env, plan.launchers.env);
  overlay(plan.env, plan.enforcement.env);
  auto recorded_inputs = configure_inputs(plan.env, plan.launchers.cuda_launcher, plan.recipe_env.key_text,
                                          in.extra_env, in.enforce_archs);
  // A launcher toolkit's path hashes archbuild's own: what CMake keeps of it
  // is which toolkit it stands for, whatever archbuild's path.
  for (const auto& toolkit : plan.launchers.toolkits)
    if (auto home = recorded_inputs.find("CUDA_HOME");
        home != recorded_inputs.end() && home->second == toolkit.dir.string())
      home->second = "archbuild's launcher toolkit (" +
                     (toolkit.launcher.empty() ? "step launcher" : toolkit.launcher) + ") over " +
                     toolkit.toolkit_root.string();
  // CMake caches its linker flags at the first configure and setuptools
  // keeps a linked module newer than its sources: a tree built before the
  // shared runtime was linked is configured afresh, its outputs removed.
  if (const auto* remedy = facts.cxx_runtime_remedy())
    recorded_inputs["archbuild.cxx_runtime"] = join(remedy->ldflags, " ");
  plan.configure = plan_configure(in, facts, std::move(recorded_inputs));
  overlay(plan.env, plan.configure.env);
  plan.network = plan_network(in);
  overlay(plan.env, plan.network.env);
  overlay(plan.env, plan.cluster.env);

  plan.key = KeyInputs::of(key_fields(in, facts, plan));
  plan.requirements = describe_requirements(facts.build_requirements);
  forecast_needs(plan, in, facts);
  return plan;
}

BuildPlan BuildPlan::with_jobs(unsigned count) const {
  BuildPlan retry = *this;
  retry.jobs.jobs = count;
  set_jobs(retry.env, count);
  // An OOM retry continues the build: it does not configure afresh.
  retry.env.erase("CMAKE_FRESH");
  retry.configure.env.erase("CMAKE_FRESH");
  retry.configure.stale_outputs.clear();
  return retry;
}

nlohmann::json BuildPlan::to_json() const {
  return {{"package", package},
          {"recipe", recipe},
          {"ref", ref},
          {"build_system", build_system},
          {"python", python},
          {"source_dir", source_dir.string()},
          {"out_dir", out_dir.string()},
          {"wheel_dir", wheel_dir.string()},
          {"log", log_path.string()},
          {"trace", trace_path.string()},
          {"argv", argv},
          {"env", secrets::recorded_env(env)},
          {"cxx_runtime", cxx_runtime},
          {"torch_cuda_arch_list", arch_list},
          {"arch_dialect", to_string(dialect)},
          {"jobs", jobs.jobs},
          {"nvcc_threads", jobs.nvcc_threads},
          {"jobs_reason", jobs.reason},
          {"parallelism", jobs.parallelism},
          {"network", network.description},
          {"compile_cluster", cluster.to_json()},
          {"libraries", recipe_env.libraries},
          {"build_requirements", requirements},
          {"job_memory_gb", job_memory_gb},
          {"cmake_fresh", configure.fresh},
          {"cmake_fresh_reason", configure.reason},
          {"arch_enforcement", enforcement.on},
          {"stale_outputs",
           [this] {
             std::vector<std::string> paths;
             for (const auto& path : configure.stale_outputs) paths.push_back(path.string());
             return paths;
           }()},
          {"key_inputs", key.values()},
          {"code_images", code_images},
          {"clean_build", clean_build},
          {"forecast",
           {{"seconds", forecast.seconds ? nlohmann::json(*forecast.seconds) : nlohmann::json()},
            {"from_history", forecast.from_history},
            {"warm_compile_cache", forecast.warm},
            {"basis", forecast.basis}}},
          {"needs",
           {{"disk_bytes", disk_bytes ? nlohmann::json(*disk_bytes) : nlohmann::json()},
            {"disk_basis", disk_basis},
            {"peak_memory_gb", peak_memory_gb}}}};
}

std::string BuildPlan::shell_script() const {
  std::string script = "cd " + shell_quote(source_dir.string()) + "\n";
  for (const auto& stale : configure.stale_outputs)
    script += "rm -rf " + shell_quote(stale.lexically_relative(source_dir).string()) + "\n";
  for (const auto& [key, value] : env) {
    std::string tail = inherited_path.empty() ? "" : ":" + inherited_path;
    if (key == "PATH" && !tail.empty() && value.size() > tail.size() &&
        value.compare(value.size() - tail.size(), tail.size(), tail) == 0)
      script += "export PATH=" + shell_quote(value.substr(0, value.size() - tail.size())) + ":\"$PATH\"\n";
    else if (secrets::recorded_value(key, value) != value)
      // A secret is not printed: the script takes it from the environment.
      script += "export " + key + "=\"${" + key + ":?" + key + " holds a secret the plan does not print: set it}\"\n";
    else
      script += "export " + key + "=" + shell_quote(value) + "\n";
  }
  std::vector<std::string> quoted;
  for (const auto& word : argv) quoted.push_back(shell_quote(word));
  return script + join(quoted, " ") + "\n";
}

}  // namespace archbuild
