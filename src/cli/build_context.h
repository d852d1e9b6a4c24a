#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "build/build_plan.h"
#include "build/dependency_env.h"
#include "cli/host_context.h"
#include "config/settings.h"
#include "source/mirror_cache.h"
#include "source/source_target.h"
#include "ui/status_line.h"

namespace archbuild {

// The options `plan` and `build` share.
struct BuildOptions {
  std::string what, arch, ref, recipe, cuda, cache_dir, python, out, launcher, remote_cache, jobs;
  std::vector<std::string> patches, mirrors;
  std::string torch_wheel;
  bool offline = false, json = false, no_validate = false, rebuild = false, use_installed_torch = false;
  void declare(CLI::App& app);
  std::map<std::string, std::string> setting_flags() const;
};

// Everything resolved before a build: settings, machine, recipe, archs, source target.
struct BuildContext {
  Settings settings;
  HostContext host;
  RecipeBook book;
  std::filesystem::path cache_dir;
  std::unique_ptr<StatusLine> status;
  std::unique_ptr<MirrorCache> mirrors;
  SourceTarget target;
  ResolvedRecipe resolved;
  ResolvedArchs archs;
  std::optional<HostCompiler> host_compiler;
  std::filesystem::path source_dir;  // where the work tree is (or will be)
  std::filesystem::path out_dir;

  static BuildContext resolve(const BuildOptions& options);
  CheckoutRequest checkout_request(const BuildOptions& options) const;
  // The interpreter the settings name, as an absolute path (throws when missing).
  std::string python() const;
  // The plan; `source` is the checked-out tree when there is one, `deps` the
  // environment a dependent recipe builds in (its python and key inputs).
  BuildPlan plan(const BuildOptions& options, const std::optional<SourceTree>& source,
                 const DependencyEnv* deps = nullptr) const;
};

}  // namespace archbuild
