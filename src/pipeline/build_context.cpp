#include "pipeline/build_context.h"

#include "cluster/cluster_setting.h"
#include "config/setting_names.h"
#include "core/cache_layout.h"
#include "core/error.h"
#include "core/log.h"
#include "core/secrets.h"
#include "core/strings.h"
#include "core/user_path.h"
#include "pipeline/inherited_archs.h"
#include "process/run_process.h"
#include "source/pypi_sdist.h"
#include "validate/audit_tool.h"

namespace archbuild {

UrlRewriter make_url_rewriter(const Settings& settings, const std::vector<std::string>& mirror_options) {
  UrlRewriter rewriter;
  for (const auto& mirror : settings.file().mirrors) rewriter.add({mirror.from, mirror.to});
  for (const auto& rule : mirror_options) rewriter.add_option(rule);
  return rewriter;
}

CheckoutRequest make_checkout_request(const SourceTarget& target, const Settings& settings,
                                      const std::vector<std::string>& mirror_options,
                                      const std::vector<std::string>& extra_patches,
                                      const std::filesystem::path& dest) {
  CheckoutRequest request;
  request.rewriter = make_url_rewriter(settings, mirror_options);
  request.url = target.url;
  request.ref = target.ref;
  request.dest = dest;
  request.submodules = target.submodules;
  request.offline = settings.offline();
  request.patches = target.patches;
  request.sdist = target.sdist;  // pypi:NAME==VERSION: recorded in the manifest
  request.snapshot = target.snapshot;
  request.subdirectory = target.subdirectory;
  for (const auto& patch : extra_patches) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(patch, ec)) fail_bad_input("--patch " + patch + ": no such file");
    request.patches.push_back({std::filesystem::absolute(patch), "--patch"});
  }
  return request;
}

namespace {
// "torch-2.9.1+cu128-cp311-...whl" -> "2.9.1+cu128"; "" when not a torch wheel's name.
std::string torch_version_of_wheel(const std::filesystem::path& wheel) {
  const auto name = wheel.filename().string();
  if (!name.starts_with("torch-")) return "";
  const auto end = name.find('-', 6);
  return end == std::string::npos ? "" : name.substr(6, end - 6);
}
}  // namespace

OwnedDir build_out_dir(const std::filesystem::path& dir) {
  return {dir,
          ".archbuild-build",
          {"wheels", "variants", "tmp", "validate", "build-env", "build-requirements", "library-links", "sccache",
           "build.log", "nvcc.log", "steps.log", "trace.json", "report.json", "key.txt", "archbuild-debug.log",
           "archbuild.log"},
          "the build output dir"};
}

namespace {

// The arch list to build: the dependency's parent's list as is, --arch
// resolved against this machine, or the list of the torch it builds against.
void resolve_build_archs(BuildContext& context, const BuildRequest& request) {
  // An extension's arch list is read by cpp_extension: its names, and the archs it accepts.
  std::optional<ArchNames> names;
  if (context.target.recipe->dialect == ArchDialect::extension) {
    names = CppExtensionArchTable::load_default().for_torch(torch_version_of_wheel(context.intent.torch.wheel));
    log::verbose("archs: names and accepted archs as {} reads them", names->consumer);
  }
  const ArchNames* consumer = names ? &*names : nullptr;
  if (request.archs) {
    context.archs = context.host.resolve(*request.archs, consumer);
  } else if (request.arch.empty()) {
    auto inherited = inherit_archs(context.intent.torch, *context.target.recipe, context.cache,
                                   context.host.toolchain.key_string(), context.settings.python().string());
    context.archs = context.host.resolve(inherited.list, consumer);
    context.archs_origin = inherited.origin;
  } else {
    context.archs = context.host.resolve(request.arch, consumer);
  }
}

// The launcher and the compile cluster the settings name, checked.
void resolve_compile_settings(BuildContext& context) {
  context.compiler_launcher = context.settings.compiler_launcher();
  if (const auto program = launcher_program(context.compiler_launcher); !program.empty() && !find_on_path(program))
    fail_environment("compiler launcher '" + program + "' is not on PATH (use --compiler-launcher none)");
  const auto cluster = resolve_cluster_setting(context.settings);
  context.compile_cluster = cluster.scheduler_url;
  context.compile_cluster_token = cluster.token_file;
}

// Without --test or a recipe's [tests], --test-timeout and --max-failed-tests
// apply to the suite validation may find in the source tree.
void resolve_project_tests(BuildContext& context, const BuildRequest& request) {
  const bool named = !request.test_command.empty() || (context.target.recipe && context.target.recipe->tests);
  context.tests = choose_project_tests(context.target.recipe, request.test_command,
                                       named ? request.test_timeout_seconds : std::nullopt,
                                       named ? request.max_failed_tests : std::nullopt, context.tests_origin);
}

}  // namespace

BuildContext BuildContext::resolve(const BuildRequest& request, CacheUse use) {
  auto settings = Settings::load(request.setting_flags);
  const auto out = request.out.empty() ? std::filesystem::path() : checked_user_path(request.out, "--out");
  if (!out.empty()) build_out_dir(out).check();  // a user's directory: refused before anything is fetched or written
  CacheLayout cache(use == CacheUse::build ? settings.made_cache_dir() : settings.cache_dir());
  // The digests that stand for secrets: the cache's own key where it has one
  // (made by the build, below; a plan writes nothing).
  secrets::use_cache_secret(cache.root(), false);
  auto book = RecipeBook::load_for(settings);  // site recipes (recipe_path) before the built-in ones
  BuildContext context{.intent = BuildIntent::of(request),
                       .settings = std::move(settings),
                       .host = HostContext::gather(request.cuda),
                       .book = std::move(book),
                       .cache = cache};
  MirrorCache mirrors(cache.root());
  const auto rewriter = make_url_rewriter(context.settings, request.mirrors);
  SdistFetcher sdists(context.settings, rewriter);  // pypi:NAME[==VERSION], an sdist file
  context.target = resolve_source_target({request.what, request.ref, request.recipe, request.subdirectory},
                                         context.book, mirrors, context.settings.offline(), &sdists, &rewriter);
  context.resolved = context.book.resolve(*context.target.recipe, context.target.ref);
  resolve_build_archs(context, request);
  try {
    context.host_compiler = detect_host_compiler(context.host.toolchain);
  } catch (const UserError&) {
    // `check` reports it; a plan without one leaves CUDAHOSTCXX to the build
  }
  context.source_dir = cache.worktree(context.target.name, context.target.work_tree_name);
  context.out_dir = out.empty() ? cache.build_dir(context.target.name, context.target.work_tree_name) : out;
  if (out.empty()) build_out_dir(context.out_dir).check();
  resolve_compile_settings(context);
  context.extra_env = request.env;
  resolve_project_tests(context, request);
  context.test_dependencies = {context.settings.test_wheelhouses(), context.intent.allow_network};
  return context;
}

std::map<std::string, FoundLibrary> BuildContext::system_libraries() const {
  std::optional<std::filesystem::path> toolkit;
  if (host.toolchain.installed) toolkit = host.toolchain.installed->root;
  return find_system_libraries(target.recipe->system_libraries, toolkit);
}

std::filesystem::path BuildContext::project_dir() const {
  return target.subdirectory.empty() ? source_dir : source_dir / target.subdirectory;
}

CheckoutRequest BuildContext::checkout_request() const {
  return make_checkout_request(target, settings, intent.mirrors, intent.patches, source_dir);
}

CompileClusterRequest BuildContext::compile_cluster_request(const std::filesystem::path& state_dir,
                                                            const std::filesystem::path& temp_dir) const {
  CompileClusterRequest request;
  request.scheduler_url = compile_cluster;
  request.token_file = compile_cluster_token;
  request.sccache = find_on_path("sccache").value_or("sccache");
  request.state_dir = state_dir;
  request.cache_dir = CacheLayout(cache.root()).sccache();
  request.temp_dir = temp_dir;
  request.probe_compiler = host_compiler ? host_compiler->path : "c++";
  request.cuda = host.toolchain.version();
  return request;
}

PlanInputs BuildContext::plan_inputs(const std::optional<SourceTree>& source, const std::string& python,
                                     const NetworkIsolationProbe& network, const DependencyEnv* dependencies,
                                     const std::map<std::string, std::string>& build_requirements) const {
  PlanInputs inputs;
  inputs.recipe = target.recipe;
  inputs.resolved = resolved;
  inputs.package = target.name;
  inputs.source_identity = target.identity();
  inputs.archs = archs.list;
  inputs.toolchain = &host.toolchain;
  inputs.host = host_compiler;
  inputs.source_dir = source ? source->project_dir() : project_dir();
  inputs.out_dir = out_dir;
  inputs.cache_dir = cache.root();
  inputs.python = python;
  inputs.jobs_override = settings.jobs();
  inputs.compiler_launcher = compiler_launcher;
  inputs.compiler_cache_remote = settings.compiler_cache_remote();
  inputs.compile_cluster = compile_cluster;
  inputs.source = source;
  if (dependencies) {
    inputs.dependencies = dependencies->built_against;
    inputs.dependency_versions = dependencies->versions;
  }
  inputs.build_requirements = build_requirements;
  inputs.enforce_archs = !intent.keep_project_archs && !target.recipe->keep_project_archs;
  inputs.extra_env = extra_env;
  inputs.allow_network = intent.allow_network;
  if (settings.portable()) inputs.portable = join(audit_tool_requirements(), " ");
  if (!intent.allow_network) inputs.network = network;
  return inputs;
}

}  // namespace archbuild
