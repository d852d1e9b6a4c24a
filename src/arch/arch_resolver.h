#pragma once

#include <optional>
#include <string>
#include <vector>

#include "arch/arch_names.h"
#include "arch/arch_spec.h"
#include "arch/cuda_targets.h"

namespace archbuild {

// What resolution needs from the outside world, as plain values.
struct ArchResolveInputs {
  const CudaTargets* toolkit = nullptr;  // what the selected toolkit can target
  std::vector<CudaTargets> releases;     // every known release, oldest first (for "which CUDA can")
  // CCs of the visible GPUs; nullopt = no GPU (then `no_gpu_reason` says why).
  std::optional<std::vector<ComputeCapability>> native_ccs;
  std::string no_gpu_reason;
  // The consumer's rules (arch_names.h): what it accepts. Null: PyTorch's
  // CMake (anything the toolkit can).
  const ArchNames* names = nullptr;
  // The host's CPU ("x86_64", "aarch64"): `official` is PyTorch's list for
  // the wheels of this platform.
  std::string machine = "x86_64";
};

struct ResolvedArchs {
  ArchList list;
  std::vector<std::string> notes;  // e.g. where `official` came from
};

// Turns parsed items into the ArchList to build. Errors name every offending
// item: bad_input for CCs no toolkit knows or the consumer does not accept,
// environment for CCs this toolkit cannot target (with the CUDA versions
// that can) and for `native` without GPUs. `all` and `official` keep what
// the consumer accepts, and a note names what they dropped.
ResolvedArchs resolve_archs(const std::vector<ArchSpecItem>& items, const ArchResolveInputs& inputs);

// "CUDA 13.0 cannot target sm_50; the last CUDA that can is 12.9": exposed for doctor.
std::string explain_untargetable(const ArchTarget& target, const CudaTargets& toolkit,
                                 const std::vector<CudaTargets>& releases);

}  // namespace archbuild
