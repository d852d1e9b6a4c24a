#include "build/build_plan.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include "build/launcher_shims.h"
#include "core/data_dir.h"
#include "core/strings.h"
#include "process/run_process.h"

namespace archbuild {

size_t count_cuda_files(const std::filesystem::path& dir) {
  size_t count = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, std::filesystem::directory_options::skip_permission_denied, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    auto name = it->path().filename().string();
    if (it->is_directory(ec) && (name == ".git" || name == "build" || name == "dist")) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->path().extension() == ".cu") ++count;
  }
  return count;
}

bool compiles_one_file_at_a_time(const std::filesystem::path& dir) {
  std::ifstream in(dir / "setup.py");
  if (!in) return false;
  std::stringstream text;
  text << in.rdbuf();
  static const std::regex no_ninja(R"(use_ninja\s*=\s*False)");
  return std::regex_search(text.str(), no_ninja);
}

std::vector<std::filesystem::path> setuptools_build_outputs(const std::filesystem::path& source_dir) {
  std::vector<std::filesystem::path> outputs;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(source_dir / "build", ec)) {
    const auto name = entry.path().filename().string();
    if (entry.is_directory(ec) && (name.starts_with("lib.") || name.starts_with("temp.") || name.starts_with("bdist.")))
      outputs.push_back(entry.path());
  }
  std::sort(outputs.begin(), outputs.end());
  return outputs;
}

namespace {

std::filesystem::path configure_stamp(const std::filesystem::path& source_dir) {
  return source_dir / ".git" / "archbuild-configured.json";
}

std::string substitute(std::string word, const PlanInputs& in, const std::filesystem::path& wheel_dir) {
  auto replace = [&](const std::string& key, const std::string& value) {
    for (size_t at; (at = word.find(key)) != std::string::npos;) word.replace(at, key.size(), value);
  };
  replace("{python}", in.python);
  replace("{archbuild_data}", data_dir().string());  // recipes/frontends/, shipped with archbuild
  replace("{source_dir}", in.source_dir.string());
  replace("{wheel_dir}", wheel_dir.string());
  return word;
}

bool has_cmake_build_dir(const std::filesystem::path& source_dir) {
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(source_dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it.depth() > 3 || it->path().filename() == ".git") it.disable_recursion_pending();
    if (it->path().filename() == "CMakeCache.txt") return true;
  }
  return false;
}

}  // namespace

std::optional<std::map<std::string, std::string>> recorded_configure_inputs(const std::filesystem::path& source_dir) {
  std::ifstream in(configure_stamp(source_dir));
  if (!in) return std::nullopt;
  try {
    return nlohmann::json::parse(in).get<std::map<std::string, std::string>>();
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

void record_configure_inputs(const BuildPlan& plan) {
  std::error_code ec;
  if (!std::filesystem::is_directory(plan.source_dir / ".git", ec)) return;
  std::ofstream(configure_stamp(plan.source_dir)) << nlohmann::json(plan.configure_inputs).dump(2) << "\n";
}

BuildPlan make_plan(const PlanInputs& in) {
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
  plan.job_memory_gb = in.job_inputs.job_memory_gb;
  plan.jobs = plan_jobs(in.job_inputs);

  for (const auto& word : in.resolved.build->command) plan.argv.push_back(substitute(word, in, plan.wheel_dir));
  for (const auto& [key, value] : in.resolved.build->env) plan.env[key] = substitute(value, in, plan.wheel_dir);

  // What PyTorch's build (and cpp_extension) read: REFERENCE.md §3.
  plan.env["TORCH_CUDA_ARCH_LIST"] = plan.arch_list;
  plan.env["MAX_JOBS"] = std::to_string(plan.jobs.jobs);
  plan.env["CMAKE_BUILD_PARALLEL_LEVEL"] = std::to_string(plan.jobs.jobs);
  plan.env["USE_NINJA"] = "1";
  plan.env["PYTHONUNBUFFERED"] = "1";  // build output arrives as it happens
  plan.env["TMPDIR"] = (in.out_dir / "tmp").string();  // nvcc's intermediates on the build disk
  if (in.toolchain->installed) {
    plan.env["CUDA_HOME"] = in.toolchain->installed->root.string();
    plan.env["CUDA_PATH"] = in.toolchain->installed->root.string();
    plan.env["CUDACXX"] = in.toolchain->installed->nvcc.string();
    plan.env["CMAKE_CUDA_COMPILER"] = in.toolchain->installed->nvcc.string();
    const char* path = std::getenv("PATH");
    plan.env["PATH"] = (in.toolchain->installed->root / "bin").string() + (path ? std::string(":") + path : "");
  }
  if (in.host) plan.env["CUDAHOSTCXX"] = in.host->path.string();
  if (plan.jobs.nvcc_threads > 1) plan.env["NVCC_APPEND_FLAGS"] = "--threads " + std::to_string(plan.jobs.nvcc_threads);
  if (!in.compiler_launcher.empty()) {
    for (const char* lang : {"C", "CXX", "CUDA"})
      plan.env[std::string("CMAKE_") + lang + "_COMPILER_LAUNCHER"] = in.compiler_launcher;
    if (in.compiler_launcher == "ccache") {
      plan.env["CCACHE_DIR"] = (in.cache_dir / "ccache").string();
      plan.env["CCACHE_BASEDIR"] = in.source_dir.string();  // hits across work trees
      // Builders share compile results through it (ccache 4.4+: redis, http, file).
      if (!in.compiler_cache_remote.empty()) plan.env["CCACHE_REMOTE_STORAGE"] = in.compiler_cache_remote;
    }
    // torch.utils.cpp_extension ignores CMake's launcher variables: nvcc
    // goes through a toolkit whose bin/nvcc runs the launcher (CUDA_HOME),
    // the C++ compiler through ccache's symlink mode (below).
    if (in.toolchain->installed && plan.dialect == ArchDialect::extension) {
      const auto shim = launcher_toolkit_dir(in.cache_dir, in.compiler_launcher, in.toolchain->installed->root);
      plan.env["CUDA_HOME"] = shim.string();
      plan.env["CUDA_PATH"] = shim.string();
    }
    if (in.compiler_launcher == "ccache" && plan.dialect == ArchDialect::extension) {
      // An absolute $CXX becomes the symlink dir's entry of the same name,
      // with its own dir next on PATH so ccache runs that compiler.
      const char* path = std::getenv("PATH");
      std::string search = plan.env.count("PATH") ? plan.env["PATH"] : std::string(path ? path : "");
      const auto shims = ccache_masquerade_dir(in.cache_dir);
      const char* cxx = std::getenv("CXX");
      if (cxx && *cxx && std::filesystem::path(cxx).is_absolute()) {
        plan.env["CXX"] = (shims / std::filesystem::path(cxx).filename()).string();
        search = std::filesystem::path(cxx).parent_path().string() + ":" + search;
      }
      plan.env["PATH"] = shims.string() + ":" + search;
    }
  }

  // A changed arch list (or toolkit, or host compiler) is silently ignored by
  // a configured CMake build dir: ask for a fresh configure when they differ.
  for (const char* key : {"TORCH_CUDA_ARCH_LIST", "CUDA_HOME", "CUDAHOSTCXX", "NVCC_APPEND_FLAGS",
                          "CMAKE_CUDA_COMPILER_LAUNCHER"})
    if (auto it = plan.env.find(key); it != plan.env.end()) plan.configure_inputs[key] = it->second;
  for (const auto& [key, value] : in.resolved.build->env) plan.configure_inputs[key] = value;
  auto recorded = recorded_configure_inputs(in.source_dir);
  auto setuptools_outputs = setuptools_build_outputs(in.source_dir);
  if (recorded && *recorded != plan.configure_inputs) {
    std::map<std::string, std::string> keys = *recorded;
    keys.insert(plan.configure_inputs.begin(), plan.configure_inputs.end());
    std::vector<std::string> changes;
    for (const auto& [key, unused] : keys) {
      auto before = recorded->find(key), after = plan.configure_inputs.find(key);
      std::string was = before == recorded->end() ? "(unset)" : before->second;
      std::string now = after == plan.configure_inputs.end() ? "(unset)" : after->second;
      if (was != now) changes.push_back(key + " changed: " + was + " -> " + now);
    }
    plan.cmake_fresh_reason = join(changes, "; ");
  } else if (!recorded && has_cmake_build_dir(in.source_dir)) {
    plan.cmake_fresh_reason = "a CMake build dir exists whose inputs archbuild did not record";
  } else if (!recorded && !setuptools_outputs.empty()) {
    plan.cmake_fresh_reason = "setuptools outputs exist whose inputs archbuild did not record";
  }
  plan.cmake_fresh = !plan.cmake_fresh_reason.empty();
  if (plan.cmake_fresh) {
    plan.env["CMAKE_FRESH"] = "1";
    plan.stale_outputs = std::move(setuptools_outputs);
  }

  // The cache key's inputs (sorted `key value` text in the cache, issue 6).
  auto& key = plan.key_inputs;
  key["recipe"] = in.recipe->name;
  key["recipe.sha256"] = in.recipe->file_sha256;
  key["ref"] = plan.ref;
  key["arch_list"] = plan.arch_list;
  key["arch_dialect"] = to_string(plan.dialect);
  key["cuda"] = in.toolchain->key_string();
  key["host_compiler"] = in.host ? in.host->kind + " " + in.host->version : "unknown";
  key["python_tag"] = in.python_tag;
  key["build.system"] = plan.build_system;
  key["build.command"] = join(in.resolved.build->command, " ");
  for (const auto& [name, value] : in.resolved.build->env) key["build.env." + name] = value;
  if (in.source) {
    key["source.commit"] = in.source->commit;
    for (const auto& sub : in.source->submodules) key["source.submodule." + sub.path] = sub.commit;
    for (const auto& patch : in.source->patches)
      key["source.patch." + std::filesystem::path(patch.file).filename().string()] = patch.sha256;
  }
  return plan;
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
          {"env", env},
          {"torch_cuda_arch_list", arch_list},
          {"arch_dialect", to_string(dialect)},
          {"jobs", jobs.jobs},
          {"nvcc_threads", jobs.nvcc_threads},
          {"jobs_reason", jobs.reason},
          {"job_memory_gb", job_memory_gb},
          {"cmake_fresh", cmake_fresh},
          {"cmake_fresh_reason", cmake_fresh_reason},
          {"stale_outputs", [this] {
             std::vector<std::string> paths;
             for (const auto& path : stale_outputs) paths.push_back(path.string());
             return paths;
           }()},
          {"key_inputs", key_inputs}};
}

std::string BuildPlan::shell_script() const {
  std::string script = "cd " + shell_quote(source_dir.string()) + "\n";
  for (const auto& stale : stale_outputs)
    script += "rm -rf " + shell_quote(stale.lexically_relative(source_dir).string()) + "\n";
  const char* current_path = std::getenv("PATH");
  for (const auto& [key, value] : env) {
    std::string tail = current_path ? std::string(":") + current_path : "";
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
