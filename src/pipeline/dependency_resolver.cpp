#include "pipeline/dependency_resolver.h"

#include <algorithm>
#include <map>

#include "cache/indexed_builds.h"
#include "core/error.h"
#include "core/strings.h"
#include "core/system_info.h"
#include "pipeline/build_outcome.h"
#include "wheel/wheel_archive.h"
#include "wheel/wheel_relabel.h"

namespace archbuild {

std::string public_version(const std::string& version) { return version.substr(0, version.find('+')); }

std::optional<std::filesystem::path> cached_dependency(const CacheLayout& cache, const Recipe& dependency,
                                                       const ArchList& arch_list, const std::string& cuda,
                                                       const std::string& version, const std::string& installed_torch) {
  const auto spelled = format_arch_list(arch_list, dependency.dialect);
  for (const auto& build : host_builds(cache.root(), dependency.name, cuda)) {
    const auto& record = build.record;
    if (record.arch_list != spelled) continue;
    if (!version.empty() && public_version(record.version) != version) continue;
    // Built against the torch this build uses: an installed one exactly, else
    // none of an interpreter's (a C++ extension follows its torch's ABI).
    const auto deps = KeyInputs(record.key_inputs).dependencies();
    const auto torch = deps.find("torch");
    const bool against_installed = torch != deps.end() && names_installed(torch->second);
    if (!installed_torch.empty() ? (torch != deps.end() && torch->second != installed_torch) : against_installed)
      continue;
    return build.wheel;
  }
  return std::nullopt;
}

BuildRequest dependency_build_request(const BuildIntent& parent, const std::string& name, const ArchList& archs,
                                      const std::string& pinned) {
  // Named field by field: what the user asked of this build (--test, --env,
  // --rebuild, --no-validate, --patch, --out, ...) is not asked of torch.
  BuildRequest dependency;
  dependency.what = name;
  dependency.archs = archs;                            // the same list, even when it was inherited
  if (!pinned.empty()) dependency.ref = "v" + pinned;  // release tags: v2.9.1
  dependency.cuda = parent.cuda;
  dependency.mirrors = parent.mirrors;
  dependency.setting_flags = parent.setting_flags;  // cache dir, jobs, python, launcher, offline
  return dependency;
}

namespace {

// A companion built against another version of its dependency than its
// [[pairs]] row names is refused, naming both.
void check_pin(const BuildContext& context, const std::string& dependency, const std::string& given,
               const std::string& what) {
  auto pinned = context.resolved.pinned.find(dependency);
  if (pinned == context.resolved.pinned.end() || public_version(given) == pinned->second) return;
  const Recipe& recipe = *context.target.recipe;
  fail_bad_input(recipe.name + " " + context.resolved.ref + " pairs with " + dependency + " " + pinned->second + " (" +
                 recipe.file.string() + ", [[pairs]]), but " + what + " is " + dependency + " " + given + ": give a " +
                 dependency + " " + pinned->second + ", or --ref a " + recipe.name + " that pairs with " +
                 public_version(given));
}

}  // namespace

DependencyEnv resolve_dependencies(const BuildContext& context, PipelineEvents& events,
                                   const DependencyBuilder& build_dependency, const DependencyEnvMaker& make_env) {
  const Recipe& recipe = *context.target.recipe;
  const auto& torch = context.intent.torch;
  DependencyRequest env_request{&recipe,
                                context.settings.python().string(),
                                context.out_dir / "build-env",
                                torch.kind == TorchSource::Kind::installed,
                                {}};
  if (recipe.depends_on.empty()) {
    if (!torch.from_cache())
      fail_bad_input("recipe " + recipe.name +
                     " depends on nothing: --torch-wheel / --use-installed-torch do not apply");
    return make_env(env_request);
  }
  const std::string cuda = context.host.toolchain.key_string();
  // The interpreter's torch, read once (a Python process) where the build uses it.
  const auto interpreter_torch = torch.kind == TorchSource::Kind::installed
                                     ? std::optional(read_installed_torch(env_request.python))
                                     : std::nullopt;
  // With the interpreter's torch, a dependency's cached wheel must be built against that same torch.
  const std::string installed_torch = interpreter_torch ? installed_torch_line(*interpreter_torch, env_request.python)
                                                        : std::string();
  // The cache's wheel of the dependency `name` for this arch list, built first when it has none.
  const auto dependency_wheel = [&](const std::string& name) {
    const Recipe* dependency = context.book.find(name);
    const auto pinned = context.resolved.pinned.count(name) ? context.resolved.pinned.at(name) : std::string();
    auto wheel = cached_dependency(context.cache, *dependency, context.archs.list, cuda, pinned, installed_torch);
    if (wheel) return *wheel;
    const auto arch_list = context.archs.list.canonical();
    const auto which = pinned.empty() ? name : name + " " + pinned;
    events.stage("deps", "no " + which + " wheel for " + arch_list + " in the cache: building it first");
    auto dependency_request = dependency_build_request(context.intent, name, context.archs.list, pinned);
    // against the same installed torch, where it depends on torch
    dependency_request.use_installed_torch = torch.kind == TorchSource::Kind::installed &&
                                             std::find(dependency->depends_on.begin(), dependency->depends_on.end(),
                                                       "torch") != dependency->depends_on.end();
    const std::string why = "building the dependency " + name + " (no " + which + " wheel for " + arch_list +
                            " in the cache)";
    const std::string way_out =
        torch.kind == TorchSource::Kind::installed
            ? "; fix that build, or install " + (dependency->pypi_name.empty() ? name : dependency->pypi_name) +
                  " into " + env_request.python
            : std::string(
                  "; fix that build, or build against an existing torch with --torch-wheel FILE or "
                  "--use-installed-torch");
    ExitCode built = ExitCode::work_failed;
    std::string where;
    try {
      auto outcome = build_dependency(dependency_request);
      built = outcome.exit;
      where = " (log: " + outcome.plan.log_path.string() +
              (outcome.result.error_excerpt.empty() ? "" : "; first error: " + outcome.result.error_excerpt.front()) +
              ")";
    } catch (const UserError& error) {
      // say why the dependency was being built at all (a fetch of PyTorch on an offline machine, say)
      throw UserError(error.code(), why + ": " + error.what() + way_out);
    }
    if (built == ExitCode::interrupted) throw UserError(ExitCode::interrupted, why + ": interrupted");
    if (built != ExitCode::success) fail_work("building the dependency " + name + " failed" + where + way_out);
    wheel = cached_dependency(context.cache, *dependency, context.archs.list, cuda, pinned, installed_torch);
    if (!wheel) fail_work("the dependency " + name + " was built but is not in the cache");
    return *wheel;
  };
  std::vector<std::string> wheel_recipes;  // the recipe each of env_request.wheels is of
  // recipe -> its version and "torch-scatter 2.1.2 installed in PYTHON"
  std::map<std::string, std::pair<std::string, std::string>> interpreter_has;
  if (torch.kind == TorchSource::Kind::wheel) {
    env_request.wheels = {std::filesystem::absolute(torch.wheel)};
    wheel_recipes = {"torch"};
    if (auto name = WheelName::parse(torch.wheel.filename().string()))
      check_pin(context, name->name, name->version, torch.describe());
  } else if (torch.kind == TorchSource::Kind::installed) {
    check_pin(context, "torch", interpreter_torch->version, "the torch installed for " + env_request.python);
    // Its other dependencies (pytorch-sparse imports torch_scatter): the
    // interpreter's own where it has them, else the cache's wheel, built
    // first against the same installed torch.
    for (const auto& name : recipe.depends_on) {
      if (name == "torch") continue;
      const Recipe* dependency = context.book.find(name);
      const auto distribution = dependency->pypi_name.empty() ? name : dependency->pypi_name;
      if (const auto version = installed_distribution_version(env_request.python, distribution)) {
        check_pin(context, name, *version, "the " + distribution + " installed for " + env_request.python);
        interpreter_has[name] = {*version, installed_line(distribution + " " + *version, env_request.python)};
        continue;
      }
      env_request.wheels.push_back(dependency_wheel(name));
      wheel_recipes.push_back(name);
    }
  } else {
    for (const auto& name : recipe.depends_on) {
      env_request.wheels.push_back(dependency_wheel(name));
      wheel_recipes.push_back(name);
    }
  }
  auto env = make_env(env_request);
  // {version:NAME} names the recipe, whose wheel may be called otherwise
  // (pytorch-scatter's is torch_scatter): its version under the recipe's name too.
  for (size_t i = 0; i < env_request.wheels.size() && i < wheel_recipes.size(); ++i)
    if (auto name = WheelName::parse(env_request.wheels[i].filename().string()))
      env.versions.emplace(wheel_recipes[i], name->version);
  for (const auto& [name, had] : interpreter_has) {
    env.built_against[name] = had.second;  // a key input, as a wheel's hash is
    env.versions.emplace(name, had.first);
    env.description += "; " + had.second;
  }
  // The cache's index serves them: the install line pins them (not a --torch-wheel file).
  if (torch.kind != TorchSource::Kind::wheel)
    for (const auto& wheel : env_request.wheels)
      if (auto name = WheelName::parse(wheel.filename().string())) env.from_cache[name->name] = name->version;
  events.stage("deps", env.description);
  return env;
}

}  // namespace archbuild
