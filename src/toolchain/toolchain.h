#pragma once

#include <optional>
#include <string>
#include <vector>

#include "toolchain/installed_toolkit.h"
#include "toolchain/toolkit_facts.h"

namespace archbuild {

// The toolkit a command works with: an installed one (whose nvcc's own arch
// lists win over the table) or, with --cuda for a version not installed,
// the table's facts alone.
struct Toolchain {
  std::optional<InstalledToolkit> installed;
  ToolkitFacts facts;              // effective facts
  std::vector<std::string> notes;  // where facts came from, when not obvious

  CudaVersion version() const { return facts.version; }
  // "CUDA 13.0 (/usr/local/cuda)" or "CUDA 12.9 (archbuild's table; not installed)"
  std::string describe() const;
  // What the cache key records: the installed release ("13.0.88" style) when
  // there is one, else the table's version. Dependencies match on it too.
  std::string key_string() const;
};

// `requested` = --cuda X.Y. Throws UserError(environment) when no toolkit is
// installed and none was requested, or (bad_input) for a version no table knows.
Toolchain select_toolchain(const std::vector<InstalledToolkit>& installed, const ToolkitTable& table,
                           std::optional<CudaVersion> requested);

// Merges an installed toolkit with the table (exposed for tests).
Toolchain toolchain_from_installed(const InstalledToolkit& toolkit, const ToolkitTable& table);

}  // namespace archbuild
