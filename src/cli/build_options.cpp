#include "cli/build_options.h"

#include <algorithm>
#include <cctype>

#include "config/setting_names.h"
#include "core/error.h"
#include "core/secrets.h"

namespace archbuild {

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
    // The value is never echoed: it may be a secret.
    if (!valid)
      fail_bad_input("--env '" + (equals == std::string::npos ? item : key + "=...") +
                     "': expected KEY=VALUE with KEY made of letters, digits and _");
    if (auto it = owned.find(key); it != owned.end())
      fail_bad_input("--env " + key + ": archbuild sets " + key + " itself; use " + it->second);
    if (key.starts_with("ARCHBUILD_") && key != "ARCHBUILD_PARALLEL_SETUPTOOLS")
      fail_bad_input("--env " + key + ": ARCHBUILD_ variables are archbuild's own settings, not build environment");
    env[key] = item.substr(equals + 1);
    if (secrets::is_secret_name(key)) secrets::remember(env[key]);
    secrets::remember_url_userinfo(env[key]);
  }
  return env;
}

void BuildOptions::declare(CLI::App& app) {
  app.add_option("what", what,
                 "RECIPE | PATH (a git repository or a directory, built as it is on disk) | URL (git+URL@REF"
                 "#subdirectory=DIR too) | pypi:NAME[==VERSION] | an sdist file (.tar.gz, .zip)")
      ->required();
  app.add_option("--arch", arch,
                 "Arch spec: native, official, 9.0, \"8.0;9.0+PTX\", ... (an extension build without it takes the "
                 "arch list of the torch it builds against, from that wheel's build record)");
  app.add_option("--ref", ref, "Tag, branch or commit (default: the recipe's, or the default branch)");
  app.add_option("--recipe", recipe,
                 "Build a PATH, URL or sdist with this recipe (default: the one whose repository or PyPI project it "
                 "is, else cpp-extension)");
  app.add_option("--subdirectory", subdirectory,
                 "Build the project in this directory of the tree (pip's #subdirectory=; part of the cache key)");
  app.add_option("--cuda", cuda, "CUDA version to build with (default: the installed one)");
  app.add_option("--jobs", settings.jobs, "Parallel compile jobs (default: cores and memory decide)");
  add_python_option(app, settings.python, "Interpreter the build runs with");
  add_cache_dir_option(app, settings.cache_dir);
  app.add_option("--out", out, "Where the log, wheels and trace go (default: <cache>/builds/NAME-REF)");
  app.add_option("--compiler-launcher", settings.compiler_launcher, "ccache, sccache or none");
  app.add_option("--compiler-cache-remote", settings.compiler_cache_remote,
                 "ccache remote storage shared by builders (redis://host:port)");
  app.add_option("--compile-cluster", settings.compile_cluster,
                 "Spread compiles over an sccache-dist cluster: its scheduler's URL (needs --compiler-launcher "
                 "sccache)");
  app.add_option("--compile-cluster-token-file", settings.compile_cluster_token_file,
                 "File holding the scheduler's client token");
  app.add_option("--signing-key", settings.signing_key,
                 "Sign the published build's provenance with this ed25519 private key (PEM; `cache keygen` makes one)");
  app.add_option("--patch", patches, "Apply this git-format patch too (repeatable)");
  app.add_option("--env", env,
                 "Set KEY=VALUE in the build's environment, over the recipe's (repeatable; part of the cache key)");
  app.add_option("--secret-env", secret_env,
                 "The value of this --env variable is a secret (repeatable; names holding TOKEN, SECRET, PASSWORD, "
                 "KEY, CREDENTIAL or AUTH are secrets already): kept out of every file and line, and in the cache "
                 "key as a digest");
  add_mirror_option(app, mirrors);
  add_offline_flag(app, settings.offline);
  add_require_kernel_launch_flag(app, settings.require_kernel_launch);
  add_portable_flag(app, settings.portable);
  add_recipe_path_option(app, settings.recipe_path);
  add_json_flag(app, json);
  app.add_flag("--no-validate", no_validate, "Publish without validating the wheel (recorded in the manifest)");
  app.add_flag("--rebuild", rebuild, "Build even when the cache has a wheel for the same key");
  app.add_flag("--keep-project-archs", keep_project_archs,
               "Keep the project's own nvcc arch flags (default: every nvcc call builds exactly --arch); the wheel's "
               "label then says what it holds");
  app.add_flag("--allow-network", allow_network,
               "Let the build step reach the network (default: it runs offline, in a network namespace of its own)");
  app.add_flag("--no-cuda-switches", no_cuda_switches,
               "When the wheel has no CUDA code, do not set the switches its setup.py gates the CUDA code on and "
               "build again (default: archbuild sets them, says so, and keeps them in the key)");
  add_test_options(app, tests);
  auto* wheel =
      app.add_option("--torch-wheel", torch_wheel,
                     "Build an extension against this torch wheel (default: the cache's torch for the arch list)");
  app.add_flag("--use-installed-torch", use_installed_torch,
               "Build an extension against the interpreter's installed torch")
      ->excludes(wheel);
}

BuildRequest BuildOptions::request() const {
  BuildRequest request;
  request.what = what;
  request.arch = arch;
  request.ref = ref;
  request.recipe = recipe;
  request.subdirectory = subdirectory;
  request.cuda = cuda;
  request.out = out;
  request.patches = patches;
  request.mirrors = mirrors;
  for (const auto& name : secret_env) secrets::mark_secret_name(name);  // before the values are read
  request.env = parse_env_assignments(env);
  request.torch_wheel = torch_wheel;
  request.use_installed_torch = use_installed_torch;
  request.no_validate = no_validate;
  request.rebuild = rebuild;
  request.keep_project_archs = keep_project_archs;
  request.allow_network = allow_network;
  request.no_cuda_switches = no_cuda_switches;
  request.test_command = tests.command;
  request.test_timeout_seconds = tests.timeout();
  request.max_failed_tests = tests.budget();
  request.setting_flags = settings.by_key();
  request.setting_flags[setting_name::test_wheelhouse] = tests.wheelhouse;
  return request;
}

}  // namespace archbuild
