#include "builder/recipe_environment.h"

#include "builder/system_libraries.h"

namespace archbuild {

namespace {

void replace_all(std::string& text, const std::string& key, const std::string& value) {
  for (size_t at; (at = text.find(key)) != std::string::npos;) text.replace(at, key.size(), value);
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
    replace_all(value, "{ref_version}", ref);
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

std::string substitute_plan_paths(std::string word, const PlanInputs& in, const PlanFacts& facts,
                                  const std::filesystem::path& wheel_dir) {
  replace_all(word, "{python}", in.python);
  replace_all(word, "{archbuild_data}", facts.data_dir.string());  // recipes/frontends/, shipped with archbuild
  replace_all(word, "{source_dir}", in.source_dir.string());
  replace_all(word, "{wheel_dir}", wheel_dir.string());
  return word;
}

RecipeEnvironment plan_recipe_environment(const PlanInputs& in, const PlanFacts& facts,
                                          const std::filesystem::path& wheel_dir) {
  // `env` is what the build gets; `key_text` the same before the path
  // placeholders, for the cache key and configure inputs (a key must not
  // change with the machine's paths).
  RecipeEnvironment out;
  auto& env = out.env;
  auto& text = out.key_text;
  auto set_recipe_env = [&](const std::map<std::string, std::string>& values) {
    for (const auto& [key, value] : values) {
      if (auto versioned = substitute_versions(value, in)) {
        text[key] = *versioned;
        env[key] = substitute_plan_paths(*versioned, in, facts, wheel_dir);
      } else {
        text.erase(key);
        env.erase(key);
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
      out.libraries.push_back(
          library.name + ": not found on this machine (" + library.header + ", " + library.library + ")" +
          (!wheels.empty() ? ": the build installs " + wheels.front() + " before the build step and takes it from there"
           : library.missing.empty() ? ""
                                     : ": " + library.missing));
      continue;
    }
    const auto& where = found->second;
    out.libraries.push_back(
        library.name + ": " + where.include_dir.string() + ", " + where.library_dir.string() +
        (where.wheel_requirement.empty() ? " (this machine's)" : " (from the wheel " + where.wheel_requirement + ")"));
    auto fill = [&](std::string value) {
      replace_all(value, "{include_dir}", where.include_dir.string());
      replace_all(value, "{library_dir}", where.library_dir.string());
      replace_all(value, "{requirement}", where.wheel_requirement);
      return value;
    };
    // The key names the wheel, not where this build's venv put it.
    for (const auto& [key, value] : library.found_env)
      if (!env.count(key)) {
        env[key] = fill(value);
        text[key] = where.wheel_requirement.empty() ? env[key] : "from " + where.wheel_requirement;
      }
    if (!where.wheel_requirement.empty())
      for (const auto& [key, value] : library.wheel_env)
        wheel_env[key] += (wheel_env[key].empty() ? "" : " | ") + fill(value);
  }
  for (const auto& [key, value] : wheel_env)
    if (!env.count(key)) env[key] = text[key] = value;
  return out;
}

}  // namespace archbuild
