#pragma once

#include <optional>
#include <string>

#include "arch/arch_dialect.h"
#include "arch/arch_resolver.h"
#include "gpu/gpu_probe.h"
#include "toolchain/toolchain.h"

namespace archbuild {

// What the commands need to know about this machine, gathered once per run.
struct HostContext {
  ToolkitTable table;
  std::vector<InstalledToolkit> toolkits;
  Toolchain toolchain;
  GpuReport gpus;
  std::string machine = "x86_64";  // the host CPU (uname): `official` follows its wheels

  // --cuda X.Y (empty: the first installed toolkit).
  static HostContext gather(const std::string& cuda_option);
  ArchResolveInputs resolve_inputs(const ArchNames* names) const;
  // Parses and resolves an arch spec against this machine, names and
  // accepted archs by `names` (PyTorch's CMake's when null).
  ResolvedArchs resolve(const std::string& spec, const ArchNames* names = nullptr) const;
  // Checks a list resolved before (a parent build's, a torch's record)
  // against this machine's toolkit and `names`, without spelling it again.
  ResolvedArchs resolve(const ArchList& list, const ArchNames* names = nullptr) const;
};

std::optional<CudaVersion> parse_cuda_option(const std::string& text);  // throws bad_input
ArchDialect parse_dialect_option(const std::string& text);              // throws bad_input

}  // namespace archbuild
