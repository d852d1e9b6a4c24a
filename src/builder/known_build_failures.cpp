#include "builder/known_build_failures.h"

#include <array>

namespace archbuild {

namespace {

struct KnownFailure {
  std::array<std::string_view, 3> signs;  // any one of them in the log ("" ends the list)
  std::string_view cause;
};

// The compilers' own words: nvcc's front end ("namespace "cub" has no
// member "Max"") and GCC's ("'struct cudaDeviceProp' has no member named
// 'clockRate'").
constexpr std::array<KnownFailure, 4> kKnown = {{
    {{"namespace \"cub\" has no member \"Max\"", "namespace \"cub\" has no member \"Min\"",
      "namespace \"cub\" has no member \"Sum\""},
     "the project uses cub::Max, cub::Min or cub::Sum, which CCCL 3 (CUDA 13) removed: build it with a "
     "CUDA 12 toolkit (--cuda 12.9, with that toolkit installed) or patch them to cuda::maximum<>{}, cuda::minimum<>{} "
     "and cuda::std::plus<>{} "
     "(a recipe's patches/)"},
    {{"\"cudaDeviceProp\" has no member", "'struct cudaDeviceProp' has no member named", ""},
     "the project reads cudaDeviceProp fields CUDA 13 removed (clockRate, memoryClockRate, "
     "kernelExecTimeoutEnabled, computeMode, ...): build it with a CUDA 12 toolkit (--cuda 12.9, with that toolkit "
     "installed) or patch "
     "them to cudaDeviceGetAttribute (a recipe's patches/)"},
    {{"THC/THC.h: No such file or directory", "THC/THC.h: No such file", ""},
     "the project includes THC, which torch removed in 1.11: it predates every torch that CUDA 13 builds "
     "with; port it to ATen (at::cuda::getCurrentCUDAStream, c10::cuda) in a recipe's patches/, or build "
     "a maintained fork"},
    // Python's words when setup.py's `git submodule update --init PATH` fails (flash-attn): in a
    // snapshot of a plain directory or an archive (no submodule commits), or offline.
    {{"Command '['git', 'submodule', 'update'", "", ""},
     "the project's setup.py runs `git submodule update`, which fails in a source without its submodules' commits "
     "(a plain directory or an archive, which archbuild snapshots) and offline: build a git clone with its "
     "submodules checked out (`git clone --recursive`), the repository URL or its sdist (pypi:NAME) instead"},
}};

}  // namespace

std::string known_build_failure_hint(std::string_view log_text) {
  for (const auto& known : kKnown)
    for (auto sign : known.signs)
      if (!sign.empty() && log_text.find(sign) != std::string_view::npos) return std::string(known.cause);
  return {};
}

}  // namespace archbuild
