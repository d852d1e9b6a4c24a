#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "arch/arch_target.h"

namespace archbuild {

// The two spellings of TORCH_CUDA_ARCH_LIST (docs/CUDA_FACTS.md#arch-list):
// cmake     - PyTorch's own CMake build (select_compute_arch.cmake): N.N, N.Na, N.Nf, +PTX
// extension - torch.utils.cpp_extension: N.N, N.Na, +PTX; no `f`, no names, no keywords
enum class ArchDialect { cmake, extension };

std::optional<ArchDialect> parse_arch_dialect(std::string_view text);
std::string to_string(ArchDialect dialect);

// The TORCH_CUDA_ARCH_LIST value for `list` in `dialect`. A target the
// dialect cannot express is an error naming it (never silently dropped).
std::string format_arch_list(const ArchList& list, ArchDialect dialect);

}  // namespace archbuild
