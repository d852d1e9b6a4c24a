#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "arch/arch_target.h"
#include "toolchain/cuda_version.h"

namespace archbuild {

// What one CUDA release can do, from toolchains/cuda-X.Y.toml. The installed
// nvcc overrides the arch lists when present (see Toolchain).
struct ToolkitFacts {
  CudaVersion version;
  std::string min_driver;                               // "580.65.06"
  std::vector<ComputeCapability> targets;               // sm_XY / compute_XY
  std::vector<ComputeCapability> arch_specific;         // sm_XYa
  std::vector<ComputeCapability> family_specific;       // sm_XYf
  std::optional<std::string> torch_official_arch_list;  // PyTorch's release list
  std::optional<int> max_gcc_major;
  std::optional<int> max_clang_major;
  std::filesystem::path source;  // the TOML file

  bool can_target(ComputeCapability cc, ArchVariant variant) const;
};

// Every toolchains/*.toml, sorted by version.
class ToolkitTable {
 public:
  // Throws UserError(bad_input) naming the file, line and key of a bad entry.
  static ToolkitTable load(const std::filesystem::path& dir);
  static ToolkitTable load_default();  // data_dir()/toolchains

  const std::vector<ToolkitFacts>& all() const { return facts_; }
  const ToolkitFacts* find(CudaVersion version) const;
  // The newest table at or below `version` (facts for an unlisted minor).
  const ToolkitFacts* newest_at_or_below(CudaVersion version) const;
  // Is `cc` a compute capability any known toolkit can target?
  bool knows(ComputeCapability cc, ArchVariant variant) const;

 private:
  std::vector<ToolkitFacts> facts_;
};

}  // namespace archbuild
