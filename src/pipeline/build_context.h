#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "builder/build_plan.h"
#include "builder/dependency_env.h"
#include "builder/project_switches.h"
#include "config/settings.h"
#include "core/cache_layout.h"
#include "core/ed25519.h"
#include "core/owned_dir.h"
#include "pipeline/build_intent.h"
#include "pipeline/build_request.h"
#include "pipeline/host_context.h"
#include "source/mirror_cache.h"
#include "source/source_target.h"
#include "source/source_tree.h"
#include "validate/project_tests.h"

namespace archbuild {

// Everything resolved before a build: settings, machine, recipe, archs,
// source target and where things go. `plan` and `build` start here.
struct BuildContext {
  BuildIntent intent;  // what was asked beyond the target and the arch list
  Settings settings;
  HostContext host;
  RecipeBook book;
  CacheLayout cache;
  SourceTarget target;
  ResolvedRecipe resolved;
  ResolvedArchs archs;
  std::string archs_origin;  // "" when --arch gave them; else whose arch list (inherit_archs)
  std::optional<HostCompiler> host_compiler;
  std::filesystem::path source_dir;  // where the work tree is (or will be)
  std::filesystem::path out_dir;
  CompilerLauncher compiler_launcher = CompilerLauncher::none;  // found on PATH
  std::string compile_cluster;                                  // sccache-dist scheduler URL, checked; "" none
  std::filesystem::path compile_cluster_token;                  // the file holding its client token; "" none
  std::map<std::string, std::string> extra_env;                 // --env, checked
  std::vector<EnvSwitch> cuda_switches_set;  // of extra_env, what a CPU-only first build asked archbuild to set
  std::optional<ProjectTests> tests;         // the project's own suite validation runs
  std::string tests_origin;                  // "--test", "recipe NAME"
  TestDependencySource test_dependencies;    // the test_wheelhouse setting; pip's index with --allow-network
  // The signing_key setting's key, loaded once before anything is built (a
  // key removed or changed mid-build does not lose the build); run_build sets it.
  std::optional<Ed25519Key> signer;

  // A build makes the cache dir first (one that cannot be made is refused
  // before anything runs); a plan of a local tree writes nothing.
  enum class CacheUse { build, plan };
  // Throws UserError naming what is wrong (arch spec, recipe, ref, setting).
  static BuildContext resolve(const BuildRequest& request, CacheUse use = CacheUse::build);
  CheckoutRequest checkout_request() const;
  // archbuild's sccache server for the compile cluster, its files in `state_dir`.
  CompileClusterRequest compile_cluster_request(const std::filesystem::path& state_dir,
                                                const std::filesystem::path& temp_dir) const;
  // Where the project is built: the work tree, or its subdirectory.
  std::filesystem::path project_dir() const;
  // The recipe's [[system_library]] entries found on this machine.
  std::map<std::string, FoundLibrary> system_libraries() const;
  // The plan inputs for the work tree (`source` once checked out), the
  // interpreter the build runs with (`python`: the dependency env's), what
  // the machine allows the offline step (`network`), what it builds against
  // and the build tools' versions it got.
  PlanInputs plan_inputs(const std::optional<SourceTree>& source, const std::string& python,
                         const NetworkIsolationProbe& network, const DependencyEnv* dependencies = nullptr,
                         const std::map<std::string, std::string>& build_requirements = {}) const;
};

// The URL rewrites a command applies: the config file's [mirrors], then its
// --mirror options. Throws bad_input for a malformed option.
UrlRewriter make_url_rewriter(const Settings& settings, const std::vector<std::string>& mirror_options);

// The checkout of `target` that `source` and `build` both make: the
// config file's and the command line's mirror rules, the recipe's patches
// and the extra ones (each must be a file). Throws bad_input for a missing patch.
CheckoutRequest make_checkout_request(const SourceTarget& target, const Settings& settings,
                                      const std::vector<std::string>& mirror_options,
                                      const std::vector<std::string>& extra_patches, const std::filesystem::path& dest);

// A build's out dir (--out, or <cache>/builds/NAME-REF) as archbuild owns
// it: the marker .archbuild-build and every name a build writes there. A
// user's directory holding anything else is refused before the build starts.
OwnedDir build_out_dir(const std::filesystem::path& dir);

}  // namespace archbuild
