#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace archbuild {

// What one Python interpreter says about its torch, found without importing
// it first (so a broken install is still described), then by importing it.
struct PythonEnvironment {
  std::string interpreter;  // as asked (--python or python3 on PATH)
  std::string executable;   // sys.executable
  std::string python_version;
  std::string machine;                       // platform.machine(): the CPU its wheels are for ("x86_64", "aarch64")
  std::vector<std::string> package_dirs;     // sys.path dirs that hold packages (stdlib excluded)
  std::vector<std::string> torch_dirs;       // every torch package on sys.path, in order
  std::optional<std::string> torch_dir;      // the one `import torch` would load
  std::optional<std::string> torch_version;  // from torch/version.py, as text
  std::optional<std::string> torch_cuda;     // torch.version.cuda, as text
  bool import_ok = false;
  std::string import_error;            // when the import failed
  std::vector<std::string> arch_list;  // torch.cuda.get_arch_list(), when imported
  bool cuda_available = false;
};

// Runs the probe script with `interpreter`. Throws UserError(environment)
// when the interpreter cannot be run or answers nonsense.
PythonEnvironment probe_python(const std::string& interpreter);

}  // namespace archbuild
