#include "builder/dependency_env.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/regular_file.h"
#include "core/sha256.h"
#include "core/strings.h"
#include "process/layered_venv.h"
#include "process/run_process.h"
#include "wheel/pinned_wheel.h"
#include "wheel/wheel_archive.h"

namespace archbuild {

namespace {
// A stamp is a line per wheel: far below this.
constexpr uint64_t kMaxStampBytes = 1u << 20;
}  // namespace

InstalledTorch read_installed_torch(const std::string& python) {
  // Reads torch/version.py without importing torch (seconds saved on every
  // cache hit); the build itself imports it.
  static const char* kProbe =
      "import importlib.util, pathlib, re, sys\n"
      "spec = importlib.util.find_spec('torch')\n"
      "if spec is None or not spec.submodule_search_locations: sys.exit('no module named torch')\n"
      "text = (pathlib.Path(list(spec.submodule_search_locations)[0]) / 'version.py').read_text()\n"
      "get = lambda name: (re.search(name + r\"\\s*(?::\\s*[^=]+)?=\\s*'([^']*)'\", text) or [None, 'none'])[1]\n"
      "print(get('__version__'), get('cuda'), list(spec.submodule_search_locations)[0])\n";
  auto probe = run_process({python, "-c", kProbe});
  if (!probe.succeeded()) {
    auto lines = split_any(probe.err, "\n");
    fail_environment(python + " cannot import torch (" + (lines.empty() ? probe.describe_status() : lines.back()) +
                     "): install it, or give --torch-wheel FILE");
  }
  auto words = split_any(trim(probe.out), " ");
  if (words.size() < 3) fail_environment(python + ": unexpected torch probe output '" + trim(probe.out) + "'");
  return {words[0], words[1]};
}

std::string probe_installed_torch(const std::string& python) { return read_installed_torch(python).describe(); }

std::optional<std::string> installed_distribution_version(const std::string& python, const std::string& name) {
  ProcessOptions options;
  options.timeout = std::chrono::seconds(60);
  const auto probe = run_process({python, "-c",
                                  "import sys, importlib.metadata as m\ntry:\n    "
                                  "print(m.version(sys.argv[1]))\nexcept m.PackageNotFoundError:\n    sys.exit(3)\n",
                                  name},
                                 options);
  if (!probe.succeeded() || trim(probe.out).empty()) return std::nullopt;
  return trim(probe.out);
}

DependencyEnv prepare_dependency_env(const DependencyRequest& request) {
  DependencyEnv env;
  env.python = request.python;
  if (!request.recipe || request.recipe->depends_on.empty()) return env;
  if (request.use_installed) {
    auto torch = read_installed_torch(request.python);
    env.description = installed_torch_line(torch, request.python);
    env.built_against["torch"] = env.description;
    env.versions["torch"] = torch.version;
    if (request.wheels.empty()) return env;
    // Dependencies the interpreter lacks: their wheels in a venv over it (below).
  } else if (request.wheels.empty()) {
    fail_bad_input("no wheel given for the dependencies of " + request.recipe->name);
  }
  // The venv is reused while it holds exactly these wheels (same hashes)
  // over the same interpreter, made the same way (its site dirs run as site dirs).
  std::string stamp = "layered over " + request.python + " (site dirs as site dirs)\n";
  for (const auto& wheel : request.wheels) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(wheel, ec)) fail_bad_input("no such wheel: " + wheel.string());
    auto line = PinnedWheel{wheel.filename().string(), sha256_file_hex(wheel)}.text();
    env.built_against[wheel.filename().string().substr(0, wheel.filename().string().find('-'))] = line;
    if (auto name = WheelName::parse(wheel.filename().string())) env.versions[name->name] = name->version;
    stamp += line + "\n";
  }
  const auto stamp_path = request.env_dir / "archbuild-wheels.txt";
  std::string recorded;
  if (!read_regular_file(stamp_path, kMaxStampBytes, recorded).empty()) recorded.clear();  // none: a fresh venv
  const std::string venv_python = (request.env_dir / "bin" / "python").string();
  if (recorded != stamp || !std::filesystem::exists(venv_python)) {
    make_layered_venv(request.python, request.env_dir);
    std::vector<std::string> argv = {venv_python,
                                     "-m",
                                     "pip",
                                     "install",
                                     "--no-deps",
                                     "--no-index",
                                     "--no-cache-dir",
                                     "--disable-pip-version-check",
                                     "--no-warn-script-location"};
    for (const auto& wheel : request.wheels) argv.push_back(wheel.string());
    auto installed = run_process(argv);
    if (!installed.succeeded()) {
      auto lines = split_any(installed.err, "\n");
      fail_environment("pip could not install the dependency wheels into " + request.env_dir.string() + ": " +
                       (lines.empty() ? installed.describe_status() : lines.back()));
    }
    write_file_atomically(stamp_path, stamp);
  }
  env.python = venv_python;
  std::string names;
  for (const auto& wheel : request.wheels) names += (names.empty() ? "" : ", ") + wheel.filename().string();
  env.description = names + " in " + request.env_dir.string();
  if (request.use_installed)
    env.description = env.built_against["torch"] + ", with " + env.description;
  else if (std::find(request.recipe->depends_on.begin(), request.recipe->depends_on.end(), "torch") !=
           request.recipe->depends_on.end())
    env.description = probe_installed_torch(venv_python) + " from " + env.description;
  return env;
}

}  // namespace archbuild
