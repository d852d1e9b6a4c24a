#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "arch/cuda_targets.h"

namespace archbuild {

// What one CUDA release can do, from toolchains/cuda-X.Y.toml: its targets
// (CudaTargets) and the driver and host compilers it needs. The installed
// nvcc overrides the arch lists when present (see Toolchain).
struct ToolkitFacts : CudaTargets {
  std::string min_driver;  // "580.65.06"
  std::optional<int> max_gcc_major;
  std::optional<int> max_clang_major;
  std::filesystem::path source;  // the TOML file
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
  // The newest CUDA a driver of this version ("535.104.05") supports, by the
  // releases' minimum drivers; nullopt for a driver older than all of them
  // or a version that is not N.N[.N].
  std::optional<CudaVersion> newest_for_driver(const std::string& driver_version) const;
  // Is `cc` a compute capability any known toolkit can target?
  bool knows(ComputeCapability cc, ArchVariant variant) const;
  // What each release can target, oldest first: arch resolution's view.
  std::vector<CudaTargets> release_targets() const;

 private:
  std::vector<ToolkitFacts> facts_;
};

}  // namespace archbuild
