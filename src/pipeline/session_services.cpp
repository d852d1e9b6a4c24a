#include "pipeline/session_services.h"

#include <unistd.h>

#include <chrono>
#include <ctime>

#include "core/system_info.h"

namespace archbuild {

std::string SystemServices::utc_now() {
  auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char text[32];
  std::tm parts{};
  gmtime_r(&now, &parts);
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

std::string SystemServices::host_name() { return archbuild::host_name(); }

SourceTree SystemServices::checkout(const CheckoutRequest& request, const MirrorCache& mirrors) {
  return checkout_source(request, mirrors);
}

DependencyEnv SystemServices::prepare_dependencies(const DependencyRequest& request) {
  return prepare_dependency_env(request);
}

BuildRequirementsEnv SystemServices::install_build_requirements(const std::string& python,
                                                                const std::filesystem::path& env_dir,
                                                                const std::vector<std::string>& requirements,
                                                                bool offline) {
  return ensure_build_requirements(python, env_dir, requirements, offline);
}

PlanFacts SystemServices::plan_facts(const std::filesystem::path& tree, const std::string& python) {
  return gather_plan_facts(tree, python);
}

NetworkIsolationProbe SystemServices::network_isolation() { return probe_network_isolation(); }

CxxRuntimeLink SystemServices::cxx_runtime_link(const std::string& compiler, const std::filesystem::path& links_dir) {
  const auto key = std::pair(compiler, links_dir);
  if (const auto known = cxx_runtime_links_.find(key); known != cxx_runtime_links_.end()) return known->second;
  auto link = probe_cxx_runtime_link(compiler, links_dir);
  // A trial that could not run (a compiler killed on a loaded machine, say)
  // is tried again by the next build rather than remembered.
  if (link.probed) cxx_runtime_links_[key] = link;
  return link;
}

WheelValidation SystemServices::validate(const WheelValidationRequest& request) { return validate_wheel(request); }

AuditTool SystemServices::audit_tool(const std::string& python, const std::filesystem::path& tools_dir, bool offline) {
  return ensure_audit_tool(python, tools_dir, offline);
}

WheelRepair SystemServices::repair_wheel(const std::string& python, const AuditTool& tool,
                                         const std::filesystem::path& wheel, const std::filesystem::path& out_dir) {
  const auto audit = tool.ready() ? audit_wheel(python, tool.path, wheel) : WheelAudit{};
  return archbuild::repair_wheel(python, tool, audit, wheel, out_dir);
}

std::unique_ptr<CompileCluster> SystemServices::connect_compile_cluster(const CompileClusterRequest& request) {
  return archbuild::connect_compile_cluster(request);
}

}  // namespace archbuild
