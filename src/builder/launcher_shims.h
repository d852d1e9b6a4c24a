#pragma once

#include <filesystem>
#include <string>

namespace archbuild {

// Compiler-launcher shims for builds that take no launcher variable:
// torch.utils.cpp_extension writes its own ninja file (or, with
// use_ninja=False, calls the compilers one by one itself).

// A PATH dir where gcc/g++/cc/c++ are symlinks to ccache (ccache's symlink
// mode): torch checks the C++ compiler's version through $CXX, so
// CXX="ccache g++" is refused.
std::filesystem::path ccache_masquerade_dir(const std::filesystem::path& cache_dir);
void ensure_ccache_masquerade(const std::filesystem::path& cache_dir);

// A toolkit root whose bin/nvcc runs `ARCHBUILD _launch [LAUNCHER]
// <toolkit>/bin/nvcc "$@"` (archbuild's step launcher: progress, and the
// arch list enforced on nvcc's flags) and whose every other entry links to
// the real toolkit. CUDA_HOME points there: cpp_extension calls
// $CUDA_HOME/bin/nvcc on both of its paths (PYTORCH_NVCC reaches only the
// ninja one, and only from torch 2.4 on). `launcher` may be "" (none).
std::filesystem::path launcher_toolkit_dir(const std::filesystem::path& cache_dir, const std::string& launcher,
                                           const std::filesystem::path& toolkit_root, const std::string& self);
// Creates or refreshes it; `self` is archbuild's binary, `launcher_path` the
// launcher's absolute path (empty: none).
void ensure_launcher_toolkit(const std::filesystem::path& dir, const std::string& self,
                             const std::filesystem::path& launcher_path, const std::filesystem::path& toolkit_root);

}  // namespace archbuild
