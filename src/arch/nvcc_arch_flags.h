#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "arch/arch_target.h"

namespace archbuild {

// One image nvcc embeds: SASS for a real GPU (sm_90a) or PTX for a virtual
// one (compute_90).
struct NvccTarget {
  ComputeCapability cc;
  ArchVariant variant = ArchVariant::plain;
  bool ptx = false;
  auto operator<=>(const NvccTarget&) const = default;
  std::string name() const;  // "sm_90a", "compute_90"
  static std::optional<NvccTarget> parse(std::string_view name);
};

// The images an arch list asks for, and back: "sm_80;sm_90;compute_90".
std::vector<NvccTarget> nvcc_targets(const ArchList& list);
std::string format_nvcc_targets(const std::vector<NvccTarget>& targets, std::string_view separator = ";");
std::optional<std::vector<NvccTarget>> parse_nvcc_targets(std::string_view text);

// CMake's CUDA_ARCHITECTURES spelling (CUDAARCHS): "80-real;90" (90: SASS
// and PTX, -real: SASS only, -virtual: PTX only).
std::string cmake_cuda_architectures(const ArchList& list);

// What one nvcc command did with the asked list. The rule (docs/RECIPES.md,
// "Arch enforcement"):
//  - The targets a command names: every -gencode / --generate-code,
//    -arch / --gpu-architecture (sm_XY means SASS + PTX of XY, native / all /
//    all-major mean "whatever nvcc picks"), -code / --gpu-code.
//  - A generic unit (at least one plain sm_XY/compute_XY target, or a
//    compile with no target flags at all) is built for exactly the asked
//    targets, plus the project's own a/f variants of an asked CC (a unit
//    that adds sm_90a beside its list keeps it when 9.0 is asked).
//  - A specialised unit (only a/f variants, as CUTLASS kernels for sm_90a)
//    keeps its targets of asked CCs and nothing else; when none of its CCs
//    is asked it is left as the project wrote it, and reported.
//  - A command that already asks for exactly the result is not touched, nor
//    is one that compiles nothing (--version, -E, -M) or whose flags cannot
//    be read (reported as left).
struct NvccRewrite {
  enum class Kind { untouched, rewritten, left_as_written };
  Kind kind = Kind::untouched;
  std::vector<std::string> args;  // the command line to run (argv after nvcc)
  std::vector<NvccTarget> before, after;
  std::string reason;  // for left_as_written: why
};

NvccRewrite enforce_nvcc_targets(const std::vector<std::string>& args, const std::vector<NvccTarget>& asked);

// Splits NVCC_APPEND_FLAGS / NVCC_PREPEND_FLAGS text (nvcc adds these to
// every call) into its target flags and the rest, so that the targets can
// be judged with the command line and the rest passed on.
struct SplitFlags {
  std::vector<std::string> target_flags;
  std::string rest;
};
SplitFlags split_target_flags(std::string_view flags);

}  // namespace archbuild
