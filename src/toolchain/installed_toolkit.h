#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "arch/compute_capability.h"
#include "arch/cuda_version.h"

namespace archbuild {

// A CUDA toolkit found on this machine, described by its own nvcc.
struct InstalledToolkit {
  std::filesystem::path root;  // the dir holding bin/nvcc
  std::filesystem::path nvcc;
  CudaVersion version;
  std::string release;                          // "13.0.88" (nvcc's V-line)
  std::vector<ComputeCapability> sass_targets;  // nvcc --list-gpu-code
  std::vector<ComputeCapability> ptx_targets;   // nvcc --list-gpu-arch
  std::vector<std::string> found_via;           // "CUDA_HOME", "PATH", "/usr/local/cuda", ...
};

// Where to look: $CUDA_HOME, $CUDA_PATH, nvcc on PATH, /usr/local/cuda,
// /usr/local/cuda-*; each nvcc asked once (same real path = same toolkit).
// Directories that hold no working nvcc are skipped.
std::vector<InstalledToolkit> find_installed_toolkits();

// Describes the toolkit whose nvcc is `nvcc`; throws UserError(environment).
InstalledToolkit describe_toolkit(const std::filesystem::path& nvcc);

// What `nvcc --version` says of its release ("13.0", "V13.0.88"); nullopt
// when it fails or prints no release line.
struct NvccRelease {
  CudaVersion version;
  std::string release;
};
std::optional<NvccRelease> probe_nvcc_version(const std::filesystem::path& nvcc);

// Parses `nvcc --version` output ("... release 13.0, V13.0.88").
bool parse_nvcc_version(const std::string& text, CudaVersion& version, std::string& release);
// Parses `nvcc --list-gpu-code` / `--list-gpu-arch` output ("sm_75\nsm_80 ...").
std::vector<ComputeCapability> parse_gpu_list(const std::string& text);

}  // namespace archbuild
