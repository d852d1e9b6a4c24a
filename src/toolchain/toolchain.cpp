#include "toolchain/toolchain.h"

#include <algorithm>

#include "core/error.h"

namespace archbuild {

std::string Toolchain::describe() const {
  if (installed) return "CUDA " + installed->release + " (" + installed->root.string() + ")";
  return "CUDA " + facts.version.str() + " (archbuild's table; not installed)";
}

std::string Toolchain::key_string() const { return installed ? installed->release : facts.version.str(); }

namespace {
std::vector<ComputeCapability> intersect(const std::vector<ComputeCapability>& a,
                                         const std::vector<ComputeCapability>& b) {
  std::vector<ComputeCapability> out;
  for (auto cc : a)
    if (std::find(b.begin(), b.end(), cc) != b.end()) out.push_back(cc);
  return out;
}
}  // namespace

Toolchain toolchain_from_installed(const InstalledToolkit& toolkit, const ToolkitTable& table) {
  Toolchain chain;
  chain.installed = toolkit;
  const ToolkitFacts* base = table.find(toolkit.version);
  if (!base) {
    base = table.newest_at_or_below(toolkit.version);
    if (base)
      chain.notes.push_back("archbuild has no table for CUDA " + toolkit.version.str() +
                            "; driver minimum and a/f variants taken from CUDA " + base->version.str() + "'s (" +
                            base->source.filename().string() + ")");
    else
      chain.notes.push_back("archbuild has no table for CUDA " + toolkit.version.str() +
                            " or older; only what nvcc reports is known");
  }
  if (base) chain.facts = *base;
  chain.facts.version = toolkit.version;
  // The installed nvcc is the ground truth for what it can emit.
  chain.facts.targets = toolkit.sass_targets;
  chain.facts.arch_specific = intersect(chain.facts.arch_specific, toolkit.sass_targets);
  chain.facts.family_specific = intersect(chain.facts.family_specific, toolkit.sass_targets);
  return chain;
}

Toolchain select_toolchain(const std::vector<InstalledToolkit>& installed, const ToolkitTable& table,
                           std::optional<CudaVersion> requested) {
  if (!requested) {
    if (installed.empty())
      fail_environment(
          "no CUDA toolkit found (looked at $CUDA_HOME, $CUDA_PATH, nvcc on PATH, "
          "/usr/local/cuda, /usr/local/cuda-*); install one or pass --cuda X.Y to use "
          "archbuild's tables");
    return toolchain_from_installed(installed.front(), table);
  }
  for (const auto& toolkit : installed)
    if (toolkit.version == *requested) return toolchain_from_installed(toolkit, table);
  const ToolkitFacts* facts = table.find(*requested);
  if (!facts) {
    std::string known;
    for (const auto& f : table.all()) known += (known.empty() ? "" : ", ") + f.version.str();
    fail_bad_input("--cuda " + requested->str() +
                   ": not installed here and not in archbuild's "
                   "tables (known: " +
                   known + ")");
  }
  Toolchain chain;
  chain.facts = *facts;
  chain.notes.push_back("CUDA " + requested->str() + " is not installed here: using archbuild's table " +
                        facts->source.filename().string());
  return chain;
}

}  // namespace archbuild
