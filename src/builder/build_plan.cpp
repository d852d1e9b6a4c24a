#include "builder/build_plan.h"

#include <algorithm>
#include <cctype>

#include "arch/nvcc_arch_flags.h"
#include "builder/arch_enforcement.h"
#include "builder/launcher_shims.h"
#include "builder/step_launcher.h"
#include "core/cache_layout.h"
#include "core/error.h"
#include "core/sha256.h"
#include "core/strings.h"

namespace archbuild {

namespace {

std::string substitute(std::string word, const PlanInputs& in, const PlanFacts& facts,
                       const std::filesystem::path& wheel_dir) {
  auto replace = [&](const std::string& key, const std::string& value) {
    for (size_t at; (at = word.find(key)) != std::string::npos;) word.replace(at, key.size(), value);
  };
  replace("{python}", in.python);
  replace("{archbuild_data}", facts.data_dir.string());  // recipes/frontends/, shipped with archbuild
  replace("{source_dir}", in.source_dir.string());
  replace("{wheel_dir}", wheel_dir.string());
  return word;
}

// {ref_version} ("2.9.1" for v2.9.1) and {version:NAME} (the public version
// of the dependency NAME built against: {version:torch} is "2.9.1"):
// nullopt when a value is not known (a branch ref, a plan before the
// dependencies), and then the variable is not set at all.
std::optional<std::string> substitute_versions(std::string value, const PlanInputs& in) {
  if (value.find("{ref_version}") != std::string::npos) {
    // A release tag only (v2.9.1, 2.9.1): an rc or a branch named like a
    // version must not make a wheel that claims the release's version.
    auto ref = in.resolved.ref;
    if (ref.starts_with("v")) ref.erase(0, 1);
    if (!in.resolved.version || ref.empty() || ref.find_first_not_of("0123456789.") != std::string::npos)
      return std::nullopt;
    for (size_t at; (at = value.find("{ref_version}")) != std::string::npos;) value.replace(at, 13, ref);
  }
  for (size_t at = value.find("{version:"); at != std::string::npos; at = value.find("{version:", at)) {
    auto close = value.find('}', at);
    if (close == std::string::npos) return std::nullopt;
    auto it = in.dependency_versions.find(value.substr(at + 9, close - at - 9));
    if (it == in.dependency_versions.end()) return std::nullopt;
    const auto version = it->second.substr(0, it->second.find('+'));
    value.replace(at, close - at + 1, version);
    at += version.size();  // past what was put in
  }
  return value;
}

}  // namespace

bool runs_parallel_frontend(const BuildStep& build, const std::map<std::string, std::string>& extra_env) {
  for (const auto* env : {&extra_env, &build.env})
    if (auto off = env->find("ARCHBUILD_PARALLEL_SETUPTOOLS"); off != env->end()) {
      if (off->second == "0") return false;
      break;  // --env wins over the recipe
    }
  return std::any_of(build.command.begin(), build.command.end(),
                     [](const std::string& word) { return word.ends_with("recipes/frontends/pep517_wheel.py"); });
}

std::map<std::string, std::string> parse_env_assignments(const std::vector<std::string>& items) {
  // What archbuild itself decides, and the option that decides it.
  static const std::map<std::string, std::string> owned = {{"TORCH_CUDA_ARCH_LIST", "--arch"},
                                                           {"CUDAARCHS", "--arch"},
                                                           {"MAX_JOBS", "--jobs"},
                                                           {"CMAKE_BUILD_PARALLEL_LEVEL", "--jobs"},
                                                           {"CUDA_HOME", "--cuda"},
                                                           {"CUDA_PATH", "--cuda"},
                                                           {"CUDACXX", "--cuda"},
                                                           {"CMAKE_CUDA_COMPILER", "--cuda"},
                                                           {"PATH", "the environment archbuild runs in"}};
  std::map<std::string, std::string> env;
  for (const auto& item : items) {
    auto equals = item.find('=');
    std::string key = item.substr(0, equals);
    bool valid = equals != std::string::npos && !key.empty() && !std::isdigit(static_cast<unsigned char>(key[0])) &&
                 std::all_of(key.begin(), key.end(),
                             [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
    if (!valid) fail_bad_input("--env '" + item + "': expected KEY=VALUE with KEY made of letters, digits and _");
    if (auto it = owned.find(key); it != owned.end())
      fail_bad_input("--env " + key + ": archbuild sets " + key + " itself; use " + it->second);
    if (key.starts_with("ARCHBUILD_") && key != "ARCHBUILD_PARALLEL_SETUPTOOLS")
      fail_bad_input("--env " + key + ": ARCHBUILD_ variables are archbuild's own settings, not build environment");
    env[key] = item.substr(equals + 1);
  }
  return env;
}

namespace {
// The build's time, disk and memory (after the cache key's inputs).
void forecast_needs(BuildPlan& plan, const PlanInputs& in, const PlanFacts& facts);
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
  plan.step_log = in.out_dir / "steps.log";
  JobInputs job_inputs;
  job_inputs.cores = facts.cores;
  job_inputs.available_memory_bytes = facts.available_memory_bytes;
  job_inputs.job_memory_gb = in.recipe->job_memory_gb;
  job_inputs.jobs_override = in.jobs_override;
  job_inputs.compile_units = facts.cuda_files;
  job_inputs.one_file_at_a_time = facts.one_file_at_a_time;
  job_inputs.parallel_setuptools = runs_parallel_frontend(*in.resolved.build, in.extra_env);
  job_inputs.arch_count = 0;
  for (const auto& target : in.archs.targets()) job_inputs.arch_count += (target.sass ? 1 : 0) + (target.ptx ? 1 : 0);
  plan.jobs = plan_jobs(job_inputs);

  for (const auto& word : in.resolved.build->command) plan.argv.push_back(substitute(word, in, facts, plan.wheel_dir));
  // The recipe's environment: [build.env], then the [[env]] rows for this
  // ref and toolkit in file order (later rows win), placeholders substituted.
  // `recipe_env` is what the build gets; `recipe_env_text` the same before
  // the path placeholders, for the cache key and configure inputs (a key
  // must not change with the machine's paths).
  std::map<std::string, std::string> recipe_env, recipe_env_text;
  auto set_recipe_env = [&](const std::map<std::string, std::string>& env) {
    for (const auto& [key, value] : env) {
      auto versioned = substitute_versions(value, in);
      if (versioned) {
        recipe_env_text[key] = *versioned;
        recipe_env[key] = substitute(*versioned, in, facts, plan.wheel_dir);
      } else {
        recipe_env_text.erase(key);
        recipe_env.erase(key);
      }
    }
  };
  set_recipe_env(in.resolved.build->env);
  std::optional<std::vector<int>> cuda;
  if (in.toolchain) cuda = std::vector<int>{in.toolchain->version().major, in.toolchain->version().minor};
  for (const auto& overlay : in.recipe->env_overlays)
    if (overlay.versions.contains(in.resolved.version) && overlay.cuda.contains(cuda)) set_recipe_env(overlay.set);
  // Libraries taken from this machine ([[system_library]]): their variables
  // under the recipe's own, so that [build.env] or --env can still say otherwise.
  const int cuda_major = in.toolchain ? in.toolchain->version().major : 0;
  std::map<std::string, std::string> wheel_env;  // several libraries' values joined with " | " (PyTorch's separator)
  for (const auto& library : in.recipe->system_libraries) {
    auto found = facts.system_libraries.find(library.name);
    if (found == facts.system_libraries.end()) {
      auto wheels = library_wheel_requirements({library}, {}, cuda_major);
      plan.libraries.push_back(
          library.name + ": not found on this machine (" + library.header + ", " + library.library + ")" +
          (!wheels.empty() ? ": the build installs " + wheels.front() + " before the build step and takes it from there"
           : library.missing.empty() ? ""
                                     : ": " + library.missing));
      continue;
    }
    const auto& where = found->second;
    plan.libraries.push_back(
        library.name + ": " + where.include_dir.string() + ", " + where.library_dir.string() +
        (where.wheel_requirement.empty() ? " (this machine's)" : " (from the wheel " + where.wheel_requirement + ")"));
    auto fill = [&](std::string text) {
      for (const auto& [placeholder, path] : {std::pair<std::string, std::string>{"{include_dir}", where.include_dir},
                                              {"{library_dir}", where.library_dir.string()},
                                              {"{requirement}", where.wheel_requirement}})
        for (size_t at; (at = text.find(placeholder)) != std::string::npos;) text.replace(at, placeholder.size(), path);
      return text;
    };
    // The key names the wheel, not where this build's venv put it.
    for (const auto& [key, value] : library.found_env)
      if (!recipe_env.count(key)) {
        recipe_env[key] = fill(value);
        recipe_env_text[key] = where.wheel_requirement.empty() ? recipe_env[key] : "from " + where.wheel_requirement;
      }
    if (!where.wheel_requirement.empty())
      for (const auto& [key, value] : library.wheel_env)
        wheel_env[key] += (wheel_env[key].empty() ? "" : " | ") + fill(value);
  }
  for (const auto& [key, value] : wheel_env)
    if (!recipe_env.count(key)) recipe_env[key] = recipe_env_text[key] = value;
  for (const auto& [key, value] : recipe_env) plan.env[key] = value;
  for (const auto& [key, value] : in.extra_env) plan.env[key] = value;

  // What PyTorch's build (and cpp_extension) read: docs/CUDA_FACTS.md.
  plan.env["TORCH_CUDA_ARCH_LIST"] = plan.arch_list;
  plan.env["MAX_JOBS"] = std::to_string(plan.jobs.jobs);
  plan.env["CMAKE_BUILD_PARALLEL_LEVEL"] = std::to_string(plan.jobs.jobs);
  plan.env["USE_NINJA"] = "1";
  plan.env["PYTHONUNBUFFERED"] = "1";                  // build output arrives as it happens
  plan.env["TMPDIR"] = (in.out_dir / "tmp").string();  // nvcc's intermediates on the build disk
  if (in.toolchain->installed) {
    plan.env["CUDA_HOME"] = in.toolchain->installed->root.string();
    plan.env["CUDA_PATH"] = in.toolchain->installed->root.string();
    plan.env["CUDACXX"] = in.toolchain->installed->nvcc.string();
    plan.env["CMAKE_CUDA_COMPILER"] = in.toolchain->installed->nvcc.string();
    plan.env["PATH"] = (in.toolchain->installed->root / "bin").string() + (facts.path.empty() ? "" : ":" + facts.path);
  }
  // A venv archbuild made for this build (build requirements: cmake, ninja)
  // is first on PATH, as an activated venv is: the build finds its tools.
  const auto python_bin = std::filesystem::path(in.python).parent_path();
  if (const auto inside = python_bin.lexically_relative(in.out_dir);
      !in.python.empty() && !inside.empty() && *inside.begin() != "..") {
    const auto& search = plan.env.count("PATH") ? plan.env["PATH"] : facts.path;
    plan.env["PATH"] = python_bin.string() + (search.empty() ? "" : ":" + search);
  }
  if (in.host) plan.env["CUDAHOSTCXX"] = in.host->path.string();
  if (plan.jobs.nvcc_threads > 1) plan.env["NVCC_APPEND_FLAGS"] = "--threads " + std::to_string(plan.jobs.nvcc_threads);
  if (!in.compiler_launcher.empty()) {
    for (const char* lang : {"C", "CXX", "CUDA"})
      plan.env[std::string("CMAKE_") + lang + "_COMPILER_LAUNCHER"] = in.compiler_launcher;
    if (in.compiler_launcher == "ccache") {
      plan.env["CCACHE_DIR"] = CacheLayout(in.cache_dir).ccache().string();
      plan.env["CCACHE_BASEDIR"] = in.source_dir.string();  // hits across work trees
      // Builders share compile results through it (ccache 4.4+: redis, http, file).
      if (!in.compiler_cache_remote.empty()) plan.env["CCACHE_REMOTE_STORAGE"] = in.compiler_cache_remote;
    }
    if (in.compiler_launcher == "ccache" && plan.dialect == ArchDialect::extension) {
      // An absolute $CXX becomes the symlink dir's entry of the same name,
      // with its own dir next on PATH so ccache runs that compiler.
      std::string search = plan.env.count("PATH") ? plan.env["PATH"] : facts.path;
      const auto shims = ccache_masquerade_dir(in.cache_dir);
      const std::filesystem::path cxx = facts.cxx;
      if (cxx.is_absolute()) {
        plan.env["CXX"] = (shims / cxx.filename()).string();
        search = cxx.parent_path().string() + ":" + search;
      }
      plan.env["PATH"] = shims.string() + ":" + search;
    }
  }

  // torch.utils.cpp_extension ignores CMake's launcher variables: its nvcc
  // goes through a toolkit whose bin/nvcc runs archbuild's step launcher
  // (arch enforcement, progress) and the compiler launcher (CUDA_HOME); the
  // C++ compiler through ccache's symlink mode (above).
  plan.enforce_archs = in.enforce_archs;
  plan.self_executable = facts.self_executable;
  plan.nvcc_log = in.out_dir / "nvcc.log";
  if (in.toolchain->installed && plan.dialect == ArchDialect::extension &&
      (!in.compiler_launcher.empty() || in.enforce_archs)) {
    const auto shim = launcher_toolkit_dir(in.cache_dir, in.compiler_launcher, in.toolchain->installed->root,
                                           facts.self_executable);
    plan.env["CUDA_HOME"] = shim.string();
    plan.env["CUDA_PATH"] = shim.string();
  }
  // comma-separated: CMake splits its launcher lists at semicolons
  const std::string nvcc_targets_text = format_nvcc_targets(nvcc_targets(in.archs), ",");
  if (in.enforce_archs) {
    plan.env[kNvccTargetsVariable] = nvcc_targets_text;
    plan.env[kNvccLogVariable] = plan.nvcc_log.string();
    plan.env["CUDAARCHS"] = cmake_cuda_architectures(in.archs);  // CMake's default CMAKE_CUDA_ARCHITECTURES
    // CMake runs its device-link step (separable compilation) without the
    // compiler launcher: its CUDA compiler itself is a launcher toolkit's
    // nvcc, which lets a call already launched pass (kStepLaunchedVariable).
    if (in.toolchain->installed) {
      const auto nvcc = launcher_toolkit_dir(in.cache_dir, "", in.toolchain->installed->root, facts.self_executable) /
                        "bin" / "nvcc";
      plan.env["CUDACXX"] = plan.env["CMAKE_CUDA_COMPILER"] = nvcc.string();
      plan.env[kRealNvccVariable] = in.toolchain->installed->nvcc.string();
    }
  }

  // A changed arch list (or toolkit, or host compiler) is silently ignored by
  // a configured CMake build dir: ask for a fresh configure when they differ.
  for (const char* key :
       {"TORCH_CUDA_ARCH_LIST", "CUDA_HOME", "CUDAHOSTCXX", "NVCC_APPEND_FLAGS", "CMAKE_CUDA_COMPILER_LAUNCHER"})
    if (auto it = plan.env.find(key); it != plan.env.end()) plan.configure_inputs[key] = it->second;
  for (const auto& [key, value] : recipe_env_text) plan.configure_inputs[key] = value;
  // CMake keeps its first CUDA compiler in its cache: the shim (enforcement
  // through the device link) is a configure input, whatever archbuild's path.
  if (auto it = plan.env.find(kRealNvccVariable); it != plan.env.end())
    plan.configure_inputs["CUDACXX"] = "archbuild's nvcc over " + it->second;
  for (const auto& [key, value] : in.extra_env) plan.configure_inputs[key] = value;
  // Enforcement happens in the launcher, not in the project's flags: turning
  // it on or off must still rebuild what was built the other way.
  plan.configure_inputs["archbuild.arch_enforcement"] = in.enforce_archs ? "on" : "off";
  const auto& recorded = facts.recorded_configure_inputs;
  auto setuptools_outputs = facts.setuptools_outputs;
  if (recorded && *recorded != plan.configure_inputs) {
    std::map<std::string, std::string> keys = *recorded;
    keys.insert(plan.configure_inputs.begin(), plan.configure_inputs.end());
    std::vector<std::string> changes;
    for (const auto& [key, unused] : keys) {
      auto before = recorded->find(key);
      auto after = plan.configure_inputs.find(key);
      std::string was = before == recorded->end() ? "(unset)" : before->second;
      std::string now = after == plan.configure_inputs.end() ? "(unset)" : after->second;
      if (was != now) changes.push_back(key + " changed: " + was + " -> " + now);
    }
    plan.cmake_fresh_reason = join(changes, "; ");
  } else if (!recorded && facts.has_cmake_build_dir) {
    plan.cmake_fresh_reason = "a CMake build dir exists whose inputs archbuild did not record";
  } else if (!recorded && !setuptools_outputs.empty()) {
    plan.cmake_fresh_reason = "setuptools outputs exist whose inputs archbuild did not record";
  }
  plan.cmake_fresh = !plan.cmake_fresh_reason.empty();
  if (plan.cmake_fresh) {
    plan.env["CMAKE_FRESH"] = "1";
    plan.stale_outputs = std::move(setuptools_outputs);
    // Builds that read no CMAKE_FRESH: their build dir goes instead.
    for (const auto& path : in.resolved.build->fresh_configure_removes)
      plan.stale_outputs.push_back(in.source_dir / path);
  }

  // archbuild's step launcher goes first in CMake's launcher lists, so the
  // status line knows which compiles are running (ninja only says when they
  // end); the launcher the user chose runs after it. In the plan, not added
  // by the executor, so that the script `archbuild plan` prints is what runs.
  for (const char* lang : {"C", "CXX", "CUDA"}) {
    const std::string key = std::string("CMAKE_") + lang + "_COMPILER_LAUNCHER";
    auto chosen = plan.env.find(key);
    plan.env[key] = facts.self_executable + ";" + kStepLauncherCommand +
                    (in.enforce_archs ? ";--nvcc-targets=" + nvcc_targets_text : "") +
                    (chosen != plan.env.end() ? ";" + chosen->second : "");
  }
  plan.env["ARCHBUILD_STEP_LOG"] = plan.step_log.string();

  // Offline by design: what the wheel holds was compiled here from the named
  // source, not downloaded by the project's setup.py.
  if (in.allow_network) {
    plan.network = "on (--allow-network)";
  } else if (!in.compiler_cache_remote.empty()) {
    plan.network = "on: the compiler cache's remote storage needs it";
  } else if (in.network.mode != NetworkIsolation::unavailable) {
    plan.isolate_network = in.network.mode;
    plan.network = "off: the build step runs in a " + in.network.describe() + " of its own";
  } else {
    plan.network = "off, best effort: no network namespace here (" + in.network.reason +
                   "); proxies point at a closed port and pip uses no index";
    for (const char* proxy : {"http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"})
      plan.env[proxy] = "http://127.0.0.1:9";
    plan.env["no_proxy"] = "";
    plan.env["NO_PROXY"] = "";
    plan.env["PIP_NO_INDEX"] = "1";
  }

  // The cache key's inputs (sorted `key value` text in the cache).
  auto& key = plan.key_inputs;
  key["recipe"] = in.recipe->name;
  key["recipe.sha256"] = in.recipe->file_sha256;
  key["ref"] = plan.ref;
  key["arch_list"] = plan.arch_list;
  key["arch_dialect"] = to_string(plan.dialect);
  key["arch_enforcement"] = in.enforce_archs ? "on" : "off";
  key["cuda"] = in.toolchain->key_string();
  key["host_compiler"] = in.host ? in.host->kind + " " + in.host->version : "unknown";
  key["python_tag"] = facts.python_tag;
  key["build.system"] = plan.build_system;
  key["build.command"] = join(in.resolved.build->command, " ");
  for (const auto& [name, value] : recipe_env_text) key["build.env." + name] = value;
  for (const auto& [name, value] : in.extra_env) key["env." + name] = value;  // --env
  if (in.source) {
    key["source.commit"] = in.source->commit;
    if (in.source->sdist) key["source.sdist.sha256"] = in.source->sdist->sha256;  // pypi:NAME==VERSION
    for (const auto& sub : in.source->submodules) key["source.submodule." + sub.path] = sub.commit;
    for (const auto& patch : in.source->patches)
      key["source.patch." + std::filesystem::path(patch.file).filename().string()] = patch.sha256;
  }
  for (const auto& [name, value] : in.dependency_key_inputs) key[name] = value;
  for (const auto& requirement : facts.build_requirements)
    plan.requirements.push_back(
        requirement.requirement + ": " +
        (!requirement.applies ? "not for this machine (marker)"
         : requirement.satisfied
             ? *requirement.installed
             : (requirement.installed ? *requirement.installed + " does not satisfy it, " : std::string("missing, ")) +
                   "installed into a build venv before the build step"));
  forecast_needs(plan, in, facts);
  return plan;
}

namespace {
void forecast_needs(BuildPlan& plan, const PlanInputs& in, const PlanFacts& facts) {
  plan.code_images = 0;
  for (const auto& target : in.archs.targets()) plan.code_images += (target.sass ? 1 : 0) + (target.ptx ? 1 : 0);
  plan.code_images = std::max<size_t>(1, plan.code_images);
  // Known before the checkout too (`archbuild plan`): the ref stands for its commits.
  std::string compile_text;
  for (const auto& [name, value] : plan.key_inputs)
    if (!name.starts_with("source.") && !name.starts_with("build.requires.")) compile_text += name + " " + value + "\n";
  plan.compile_inputs = sha256_hex(compile_text);
  ForecastRequest request;
  request.recipe = plan.recipe;
  request.ref = plan.ref;
  request.compile_inputs = plan.compile_inputs;
  request.code_images = plan.code_images;
  request.parallelism = plan.jobs.compiles_at_once;
  request.nvcc_threads = plan.jobs.nvcc_threads;
  request.cores = facts.cores;
  request.compile_cache = !in.compiler_launcher.empty();
  plan.clean_build = (!facts.has_cmake_build_dir && facts.setuptools_outputs.empty()) ||
                     (plan.cmake_fresh && !in.resolved.build->fresh_configure_removes.empty());
  request.clean = plan.clean_build;
  request.estimate = in.recipe->estimate;
  plan.forecast = forecast_build_time(facts.build_history, request);
  plan.peak_memory_gb = plan.jobs.compiles_at_once * in.recipe->job_memory_gb;
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
          {"env", env},
          {"torch_cuda_arch_list", arch_list},
          {"arch_dialect", to_string(dialect)},
          {"jobs", jobs.jobs},
          {"nvcc_threads", jobs.nvcc_threads},
          {"jobs_reason", jobs.reason},
          {"parallelism", jobs.parallelism},
          {"network", network},
          {"libraries", libraries},
          {"build_requirements", requirements},
          {"job_memory_gb", job_memory_gb},
          {"cmake_fresh", cmake_fresh},
          {"cmake_fresh_reason", cmake_fresh_reason},
          {"arch_enforcement", enforce_archs},
          {"stale_outputs",
           [this] {
             std::vector<std::string> paths;
             for (const auto& path : stale_outputs) paths.push_back(path.string());
             return paths;
           }()},
          {"key_inputs", key_inputs},
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
  for (const auto& stale : stale_outputs)
    script += "rm -rf " + shell_quote(stale.lexically_relative(source_dir).string()) + "\n";
  for (const auto& [key, value] : env) {
    std::string tail = inherited_path.empty() ? "" : ":" + inherited_path;
    if (key == "PATH" && !tail.empty() && value.size() > tail.size() &&
        value.compare(value.size() - tail.size(), tail.size(), tail) == 0)
      script += "export PATH=" + shell_quote(value.substr(0, value.size() - tail.size())) + ":\"$PATH\"\n";
    else
      script += "export " + key + "=" + shell_quote(value) + "\n";
  }
  std::vector<std::string> quoted;
  for (const auto& word : argv) quoted.push_back(shell_quote(word));
  return script + join(quoted, " ") + "\n";
}

}  // namespace archbuild
