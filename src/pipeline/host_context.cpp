#include "pipeline/host_context.h"

#include "core/error.h"
#include "core/system_info.h"

namespace archbuild {

std::optional<CudaVersion> parse_cuda_option(const std::string& text) {
  if (text.empty()) return std::nullopt;
  auto version = CudaVersion::parse(text);
  if (!version) fail_bad_input("--cuda '" + text + "' is not a CUDA version like 13.0");
  return CudaVersion{version->major, version->minor};
}

ArchDialect parse_dialect_option(const std::string& text) {
  auto dialect = parse_arch_dialect(text);
  if (!dialect) fail_bad_input("--dialect '" + text + "': expected cmake or extension");
  return *dialect;
}

HostContext HostContext::gather(const std::string& cuda_option) {
  auto requested = parse_cuda_option(cuda_option);
  HostContext context{ToolkitTable::load_default(), find_installed_toolkits(), {}, {}};
  context.toolchain = select_toolchain(context.toolkits, context.table, requested);
  context.gpus = make_gpu_probe()->probe();
  context.machine = host_machine();
  return context;
}

ArchResolveInputs HostContext::resolve_inputs(const ArchNames* names) const {
  ArchResolveInputs inputs;
  inputs.toolkit = &toolchain.facts;
  inputs.releases = table.release_targets();
  if (!gpus.devices.empty()) inputs.native_ccs = gpus.distinct_ccs();
  inputs.no_gpu_reason = gpus.unavailable_reason;
  inputs.names = names;
  inputs.machine = machine;
  return inputs;
}

ResolvedArchs HostContext::resolve(const std::string& spec, const ArchNames* names) const {
  return resolve_archs(parse_arch_spec(spec, names ? *names : pytorch_cmake_arch_names()), resolve_inputs(names));
}

ResolvedArchs HostContext::resolve(const ArchList& list, const ArchNames* names) const {
  const ArchSpecItem item{list.canonical(), ArchSpecItem::Kind::targets, list.targets()};
  return resolve_archs({item}, resolve_inputs(names));
}

}  // namespace archbuild
