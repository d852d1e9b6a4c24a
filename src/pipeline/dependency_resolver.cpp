#include "pipeline/dependency_resolver.h"

#include "cache/wheel_store.h"
#include "core/error.h"
#include "pipeline/build_session.h"

namespace archbuild {

std::optional<std::filesystem::path> cached_dependency(const CacheLayout& cache, const Recipe& dependency,
                                                       const ArchList& arch_list, const std::string& cuda) {
  const auto spelled = format_arch_list(arch_list, dependency.dialect);
  for (const auto& entry : WheelStore(cache.root()).entries())
    if (entry.value("recipe") == dependency.name && entry.value("arch_list") == spelled &&
        entry.value("cuda") == cuda && !entry.wheels.empty())
      return entry.wheels.front();
  return std::nullopt;
}

DependencyEnv resolve_dependencies(const BuildContext& context, PipelineEvents& events,
                                   const DependencyBuilder& build_dependency) {
  const Recipe& recipe = *context.target.recipe;
  const auto& request = context.request;
  DependencyRequest env_request{
      &recipe, context.settings.python().string(), context.out_dir / "build-env", request.use_installed_torch, {}};
  if (recipe.depends_on.empty()) {
    if (request.use_installed_torch || !request.torch_wheel.empty())
      fail_bad_input("recipe " + recipe.name +
                     " depends on nothing: --torch-wheel / --use-installed-torch do not apply");
    return prepare_dependency_env(env_request);
  }
  const std::string cuda = context.host.toolchain.key_string();
  if (!request.torch_wheel.empty()) {
    env_request.wheels = {std::filesystem::absolute(request.torch_wheel)};
  } else if (!request.use_installed_torch) {
    for (const auto& name : recipe.depends_on) {
      const Recipe* dependency = context.book.find(name);
      auto wheel = cached_dependency(context.cache, *dependency, context.archs.list, cuda);
      if (!wheel) {
        const auto arch_list = context.archs.list.canonical();
        events.stage("deps", "no " + name + " wheel for " + arch_list + " in the cache: building it first");
        BuildRequest dependency_request = request;
        dependency_request.what = name;
        dependency_request.arch = context.archs.list.canonical();  // the same list, even when it was inherited
        dependency_request.ref = dependency_request.recipe = "";
        dependency_request.out.clear();
        dependency_request.patches.clear();
        dependency_request.torch_wheel.clear();
        dependency_request.use_installed_torch = false;
        const std::string why = "building the dependency " + name + " (no " + name + " wheel for " + arch_list +
                                " in the cache)";
        const std::string way_out =
            "; fix that build, or build against an existing torch with --torch-wheel FILE or --use-installed-torch";
        ExitCode built = ExitCode::work_failed;
        std::string where;
        try {
          auto outcome = build_dependency(dependency_request);
          built = outcome.exit;
          where = " (log: " + outcome.plan.log_path.string() +
                  (outcome.result.error_excerpt.empty() ? ""
                                                        : "; first error: " + outcome.result.error_excerpt.front()) +
                  ")";
        } catch (const UserError& error) {
          // say why torch was being built at all (a fetch of PyTorch on an offline machine, say)
          throw UserError(error.code(), why + ": " + error.what() + way_out);
        }
        if (built == ExitCode::interrupted) throw UserError(ExitCode::interrupted, why + ": interrupted");
        if (built != ExitCode::success) fail_work("building the dependency " + name + " failed" + where + way_out);
        wheel = cached_dependency(context.cache, *dependency, context.archs.list, cuda);
        if (!wheel) fail_work("the dependency " + name + " was built but is not in the cache");
      }
      env_request.wheels.push_back(*wheel);
    }
  }
  auto env = prepare_dependency_env(env_request);
  events.stage("deps", env.description);
  return env;
}

}  // namespace archbuild
