#include "doctor/python_probe.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/strings.h"
#include "process/run_process.h"

namespace archbuild {

namespace {

// Locates torch with importlib's finder (which does not run torch's code),
// reads version.py as text, and only then tries the import. Prints one JSON line.
constexpr const char* kProbeScript = R"PY(
import importlib.util, json, os, platform, re, sys, sysconfig
out = {"executable": sys.executable, "python_version": sys.version.split()[0], "machine": platform.machine()}
stdlib = {os.path.realpath(p) for p in (sysconfig.get_paths().get("stdlib"), sysconfig.get_paths().get("platstdlib")) if p}
dirs = []
for entry in sys.path:
    if not entry: continue  # the current directory: not part of the installation
    path = os.path.realpath(entry)
    if not os.path.isdir(path) or path in dirs: continue
    if path in stdlib or os.path.basename(path) == "lib-dynload": continue
    dirs.append(path)
out["package_dirs"] = dirs
out["torch_dirs"] = [os.path.join(d, "torch") for d in dirs if os.path.isfile(os.path.join(d, "torch", "__init__.py"))]
spec = None
try:
    spec = importlib.util.find_spec("torch")
except Exception as error:
    out["find_error"] = repr(error)
if spec is not None and spec.origin:
    out["torch_dir"] = os.path.dirname(os.path.realpath(spec.origin))
    version_file = os.path.join(out["torch_dir"], "version.py")
    if os.path.isfile(version_file):
        text = open(version_file, encoding="utf-8", errors="replace").read()
        for key, name in (("__version__", "torch_version"), ("cuda", "torch_cuda")):
            match = re.search(r"^" + key + r"\s*(?::[^=]*)?=\s*['\"]([^'\"]*)['\"]", text, re.M)
            if match: out[name] = match.group(1)
    try:
        import torch
        out["import_ok"] = True
        out["torch_version"] = str(torch.__version__)
        out["torch_cuda"] = torch.version.cuda
        out["arch_list"] = list(torch.cuda.get_arch_list())
        out["cuda_available"] = bool(torch.cuda.is_available())
    except BaseException as error:
        out["import_ok"] = False
        out["import_error"] = (type(error).__name__ + ": " + str(error)).strip()
print("ARCHBUILD_PROBE " + json.dumps(out))
)PY";

template <typename T>
std::optional<T> optional_field(const nlohmann::json& object, const char* key) {
  if (!object.contains(key) || object[key].is_null()) return std::nullopt;
  return object[key].get<T>();
}

}  // namespace

PythonEnvironment probe_python(const std::string& interpreter) {
  auto program = find_on_path(interpreter);
  if (!program) fail_environment("Python interpreter '" + interpreter + "' not found");
  auto result = run_process({program->string(), "-c", kProbeScript}, {.working_dir = "/",
                                                                      .env_overrides = {{"PYTHONWARNINGS", "ignore"}},
                                                                      .timeout = std::chrono::minutes(3)});
  std::string marker = "ARCHBUILD_PROBE ";
  auto at = result.out.rfind(marker);
  if (at == std::string::npos)
    fail_environment("Python interpreter '" + interpreter + "' did not run the probe (" + result.describe_status() +
                     "): " + trim(result.err).substr(0, 400));
  nlohmann::json answer;
  try {
    answer = nlohmann::json::parse(result.out.substr(at + marker.size()));
  } catch (const nlohmann::json::exception& e) {
    fail_environment("Python interpreter '" + interpreter + "' answered unreadable JSON: " + e.what());
  }
  PythonEnvironment env;
  env.interpreter = interpreter;
  env.executable = answer.value("executable", "");
  env.python_version = answer.value("python_version", "");
  env.machine = answer.value("machine", "");
  env.package_dirs = answer.value("package_dirs", std::vector<std::string>{});
  env.torch_dirs = answer.value("torch_dirs", std::vector<std::string>{});
  env.torch_dir = optional_field<std::string>(answer, "torch_dir");
  env.torch_version = optional_field<std::string>(answer, "torch_version");
  env.torch_cuda = optional_field<std::string>(answer, "torch_cuda");
  env.import_ok = answer.value("import_ok", false);
  env.import_error = answer.value("import_error", "");
  env.arch_list = answer.value("arch_list", std::vector<std::string>{});
  env.cuda_available = answer.value("cuda_available", false);
  return env;
}

}  // namespace archbuild
