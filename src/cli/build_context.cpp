#include "cli/build_context.h"

#include "build/launcher_shims.h"
#include "core/error.h"
#include "core/strings.h"
#include "core/system_info.h"
#include "process/run_process.h"

namespace archbuild {

void BuildOptions::declare(CLI::App& app) {
  app.add_option("what", what, "RECIPE | PATH (a git repository) | URL")->required();
  app.add_option("--arch", arch, "Arch spec: native, official, 9.0, \"8.0;9.0+PTX\", ...")->required();
  app.add_option("--ref", ref, "Tag, branch or commit (default: the recipe's, or the default branch)");
  app.add_option("--recipe", recipe, "Build a PATH or URL with this recipe (default: cpp-extension)");
  app.add_option("--cuda", cuda, "CUDA version to build with (default: the installed one)");
  app.add_option("--jobs", jobs, "Parallel compile jobs (default: cores and memory decide)");
  app.add_option("--python", python, "Interpreter the build runs with (default: python3)");
  app.add_option("--cache-dir", cache_dir, "archbuild's cache");
  app.add_option("--out", out, "Where the log, wheels and trace go (default: <cache>/builds/NAME-REF)");
  app.add_option("--compiler-launcher", launcher, "ccache, sccache or none");
  app.add_option("--compiler-cache-remote", remote_cache, "ccache remote storage shared by builders (redis://host:port)");
  app.add_option("--patch", patches, "Apply this git-format patch too (repeatable)");
  app.add_option("--mirror", mirrors, "URL rewrite FROM=TO, like git's insteadOf (repeatable)");
  app.add_flag("--offline", offline, "Never fetch: use the mirrors as they are");
  app.add_flag("--json", json, "Print JSON");
  app.add_flag("--no-validate", no_validate, "Publish without validating the wheel (recorded in the manifest)");
  app.add_flag("--rebuild", rebuild, "Build even when the cache has a wheel for the same key");
  auto* wheel = app.add_option("--torch-wheel", torch_wheel,
                               "Build an extension against this torch wheel (default: the cache's torch for the arch list)");
  app.add_flag("--use-installed-torch", use_installed_torch, "Build an extension against the interpreter's installed torch")
      ->excludes(wheel);
}

std::map<std::string, std::string> BuildOptions::setting_flags() const {
  return {{"cache_dir", cache_dir},
          {"jobs", jobs},
          {"python", python},
          {"compiler_launcher", launcher},
          {"compiler_cache_remote", remote_cache},
          {"offline", offline ? "true" : ""}};
}

BuildContext BuildContext::resolve(const BuildOptions& options) {
  BuildContext context{Settings::load(options.setting_flags()),
                       HostContext::gather(options.cuda),
                       RecipeBook::load_default(),
                       {}, std::make_unique<StatusLine>(stderr), nullptr, {}, {}, {}, {}, {}, {}};
  context.cache_dir = std::filesystem::absolute(context.settings.get("cache_dir").value);
  context.archs = context.host.resolve(options.arch);
  context.mirrors = std::make_unique<MirrorCache>(context.cache_dir);
  context.target = resolve_source_target(options.what, options.ref, context.book, *context.mirrors,
                                         context.settings.offline(), options.recipe);
  context.resolved = context.book.resolve(*context.target.recipe, context.target.ref);
  try {
    context.host_compiler = detect_host_compiler(context.host.toolchain);
  } catch (const UserError&) {
    // `check` reports it; a plan without one leaves CUDAHOSTCXX to the build
  }
  std::string slot = context.target.name + "-" + path_safe(context.target.ref);
  context.source_dir = context.cache_dir / "worktrees" / slot;
  context.out_dir = options.out.empty() ? context.cache_dir / "builds" / slot : std::filesystem::absolute(options.out);
  return context;
}

CheckoutRequest BuildContext::checkout_request(const BuildOptions& options) const {
  CheckoutRequest request;
  request.rewriter = UrlRewriter(settings.file().mirrors);
  for (const auto& rule : options.mirrors) request.rewriter.add_option(rule);
  request.url = target.url;
  request.ref = target.ref;
  request.dest = source_dir;
  request.submodules = target.submodules;
  request.offline = settings.offline();
  request.patches = target.patches;
  for (const auto& patch : options.patches) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(patch, ec)) fail_bad_input("--patch " + patch + ": no such file");
    request.patches.push_back({std::filesystem::absolute(patch), "--patch"});
  }
  return request;
}

std::string BuildContext::python() const {
  auto python = find_on_path(settings.get("python").value);
  if (!python) fail_environment("python '" + settings.get("python").value + "' (from " + settings.get("python").origin + ") not found");
  return python->string();
}

BuildPlan BuildContext::plan(const BuildOptions&, const std::optional<SourceTree>& source, const DependencyEnv* deps) const {
  PlanInputs inputs;
  inputs.recipe = target.recipe;
  inputs.resolved = resolved;
  inputs.package = target.name;
  inputs.archs = archs.list;
  inputs.toolchain = &host.toolchain;
  inputs.host = host_compiler;
  inputs.source_dir = source ? source->dir : source_dir;
  inputs.out_dir = out_dir;
  inputs.cache_dir = cache_dir;
  inputs.python = deps ? deps->python : python();
  auto tag = run_process({inputs.python, "-c", "import sys; print(f'cp{sys.version_info[0]}{sys.version_info[1]}')"});
  inputs.python_tag = trim(tag.out);
  inputs.job_inputs.cores = cpu_count();
  inputs.job_inputs.available_memory_bytes = available_memory_bytes().value_or(0);
  inputs.job_inputs.job_memory_gb = target.recipe->job_memory_gb;
  inputs.job_inputs.jobs_override = settings.jobs();
  inputs.job_inputs.compile_units = count_cuda_files(inputs.source_dir);
  inputs.job_inputs.one_file_at_a_time = compiles_one_file_at_a_time(inputs.source_dir);
  inputs.job_inputs.arch_count = 0;
  for (const auto& t : archs.list.targets()) inputs.job_inputs.arch_count += (t.sass ? 1 : 0) + (t.ptx ? 1 : 0);
  std::string launcher = settings.get("compiler_launcher").value;
  if (launcher != "none" && launcher != "ccache" && launcher != "sccache")
    fail_bad_input("compiler_launcher '" + launcher + "' (from " + settings.get("compiler_launcher").origin +
                   "): expected ccache, sccache or none");
  if (launcher != "none" && !find_on_path(launcher))
    fail_environment("compiler launcher '" + launcher + "' is not on PATH (use --compiler-launcher none)");
  inputs.compiler_launcher = launcher == "none" ? "" : launcher;
  inputs.compiler_cache_remote = settings.get("compiler_cache_remote").value;
  inputs.source = source;
  auto plan = make_plan(inputs);
  if (launcher == "ccache") ensure_ccache_masquerade(cache_dir);
  if (!inputs.compiler_launcher.empty() && plan.dialect == ArchDialect::extension && host.toolchain.installed)
    ensure_launcher_toolkit(launcher_toolkit_dir(cache_dir, launcher, host.toolchain.installed->root),
                            *find_on_path(launcher), host.toolchain.installed->root);
  if (deps)
    for (const auto& [key, value] : deps->key_inputs) plan.key_inputs[key] = value;
  return plan;
}

}  // namespace archbuild
