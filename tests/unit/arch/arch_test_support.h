// Helpers shared by the tests of arch_spec, arch_resolver and arch_dialect.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "arch/arch_dialect.h"
#include "arch/arch_resolver.h"
#include "arch/arch_spec.h"
#include "arch/compute_capability.h"
#include "arch/cuda_version.h"
#include "core/error.h"
#include "core/exit_code.h"
#include "test_support.h"
#include "toolchain/toolkit_facts.h"

namespace archbuild {

// Parses, resolves and formats a spec against one toolkit of the shipped table.
struct Resolver {
  ToolkitTable tables = table();
  const ToolkitFacts* toolkit;
  std::optional<std::vector<ComputeCapability>> gpus;
  std::string machine = "x86_64";
  explicit Resolver(CudaVersion version) : toolkit(tables.find(version)) {}
  ResolvedArchs resolve(const std::string& spec) const {
    ArchResolveInputs in{toolkit, tables.release_targets(), gpus, "no GPU (test)"};
    in.machine = machine;
    return resolve_archs(parse_arch_spec(spec), in);
  }
  std::string operator()(const std::string& spec, ArchDialect dialect = ArchDialect::cmake) const {
    return format_arch_list(resolve(spec).list, dialect);
  }
};

}  // namespace archbuild
