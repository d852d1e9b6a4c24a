#include "builder/compiler_launchers.h"

#include "builder/launcher_shims.h"
#include "builder/step_launcher.h"
#include "core/cache_layout.h"
#include "core/strings.h"

namespace archbuild {

CompilerLaunchers plan_compiler_launchers(const PlanInputs& in, const PlanFacts& facts,
                                          const ArchEnforcementPlan& enforcement,
                                          const std::map<std::string, std::string>& base_env) {
  CompilerLaunchers plan;
  plan.compiler_launcher = in.compiler_launcher;
  plan.self_executable = facts.self_executable;
  plan.step_log = in.out_dir / "steps.log";
  plan.step_launcher = {facts.self_executable, kStepLauncherCommand};
  if (enforcement.on) plan.step_launcher.push_back("--nvcc-targets=" + enforcement.nvcc_targets);
  const bool extension = in.recipe->dialect == ArchDialect::extension;
  const auto launcher = launcher_program(in.compiler_launcher);  // "" for none
  if (in.compiler_launcher == CompilerLauncher::ccache) {
    plan.env["CCACHE_DIR"] = CacheLayout(in.cache_dir).ccache().string();
    // Paths under the cache (the work tree, its build dirs, the launcher
    // toolkit's and the build env's include dirs) are hashed relative to
    // the compile's directory: hits across work trees, and across caches
    // sharing a remote store.
    plan.env["CCACHE_BASEDIR"] = in.cache_dir.string();
    // Builders share compile results through it (ccache 4.4+: redis, http, file).
    if (!in.compiler_cache_remote.empty()) plan.env["CCACHE_REMOTE_STORAGE"] = in.compiler_cache_remote;
  }
  if (in.compiler_launcher == CompilerLauncher::ccache && extension) {
    // torch.utils.cpp_extension reads no launcher variable: its C++ compiler
    // goes through ccache's symlink mode. An absolute $CXX becomes the
    // symlink dir's entry of the same name, with its own dir next on PATH so
    // ccache runs that compiler.
    plan.ccache_masquerade = true;
    auto path = base_env.find("PATH");
    std::string search = path != base_env.end() ? path->second : facts.path;
    const auto shims = ccache_masquerade_dir(in.cache_dir);
    const std::filesystem::path cxx = facts.cxx;
    if (cxx.is_absolute()) {
      plan.env["CXX"] = (shims / cxx.filename()).string();
      search = cxx.parent_path().string() + ":" + search;
    }
    plan.env["PATH"] = shims.string() + ":" + search;
  }
  // ... and its nvcc goes through a toolkit whose bin/nvcc runs archbuild's
  // step launcher and the compiler launcher: CUDA_HOME and CUDA_PATH name
  // it and its bin/ comes first on PATH, in every dialect, so that a
  // setup.py or Makefile calling $CUDA_HOME/bin/nvcc or plain `nvcc` is
  // enforced too. CMake's own compiles carry the step launcher already and
  // pass through that nvcc (kStepLaunchedVariable).
  if (in.toolchain->installed && (!launcher.empty() || enforcement.on)) {
    LauncherToolkit toolkit{launcher_toolkit_dir(in.cache_dir, launcher, in.toolchain->installed->root,
                                                 facts.self_executable),
                            launcher, in.toolchain->installed->root};
    plan.env["CUDA_HOME"] = plan.env["CUDA_PATH"] = toolkit.dir.string();
    std::string search = facts.path;
    if (auto ours = plan.env.find("PATH"); ours != plan.env.end())
      search = ours->second;
    else if (auto given = base_env.find("PATH"); given != base_env.end())
      search = given->second;
    plan.env["PATH"] = (toolkit.dir / "bin").string() + ":" + search;
    plan.toolkits.push_back(std::move(toolkit));
  }
  // CMake's compiler for the device link (the enforcement's).
  if (enforcement.cmake_cuda_compiler) {
    LauncherToolkit toolkit{enforcement.cmake_cuda_compiler->parent_path().parent_path(), "",
                            in.toolchain->installed->root};
    if (plan.toolkits.empty() || !(plan.toolkits.back() == toolkit)) plan.toolkits.push_back(std::move(toolkit));
  }
  // The step launcher goes first in CMake's launcher lists, so the status
  // line knows which compiles are running (ninja only says when they end).
  // In the plan, not added by the executor, so that the script `archbuild
  // plan` prints is what runs.
  for (const char* lang : {"C", "CXX", "CUDA"}) {
    const std::string key = std::string("CMAKE_") + lang + "_COMPILER_LAUNCHER";
    std::string chosen = launcher;
    if (auto given = base_env.find(key); chosen.empty() && given != base_env.end()) chosen = given->second;
    plan.env[key] = join(plan.step_launcher, ";") + (chosen.empty() ? "" : ";" + chosen);
    if (std::string(lang) == "CUDA") plan.cuda_launcher = chosen;
  }
  plan.env["ARCHBUILD_STEP_LOG"] = plan.step_log.string();
  return plan;
}

std::string CompilerLaunchers::without_step_launcher(std::string command) const {
  const auto prefix = step_launcher.size() >= 2 ? step_launcher[0] + " " + step_launcher[1] + " " : std::string();
  if (prefix.empty() || command.rfind(prefix, 0) != 0) return command;
  command.erase(0, prefix.size());
  // and the targets it carries: the command as the user's compiler got it
  if (step_launcher.size() > 2 && command.rfind(step_launcher[2] + " ", 0) == 0)
    command.erase(0, step_launcher[2].size() + 1);
  return command;
}

}  // namespace archbuild
