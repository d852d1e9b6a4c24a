#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "builder/build_requirements.h"
#include "builder/dependency_env.h"
#include "builder/plan_facts.h"
#include "cluster/compile_cluster.h"
#include "process/command_runner.h"
#include "process/network_isolation.h"
#include "source/mirror_cache.h"
#include "source/source_tree.h"
#include "validate/wheel_repair.h"
#include "validate/wheel_validation.h"

namespace archbuild {

// What a build session does to the world besides its cache and out dirs:
// the clock, the host's name, the build step's processes, and the stages
// that run git, pip, the interpreter or the GPU. A unit test drives a whole
// session with fakes of these; `SystemServices` is the real machine.
class SessionServices {
 public:
  virtual ~SessionServices() = default;
  virtual std::string utc_now() = 0;  // ISO 8601, seconds: "2026-12-01T22:35:40Z"
  virtual std::string host_name() = 0;
  virtual CommandRunner& build_runner() = 0;  // runs the build step
  virtual SourceTree checkout(const CheckoutRequest& request, const MirrorCache& mirrors) = 0;
  virtual DependencyEnv prepare_dependencies(const DependencyRequest& request) = 0;
  virtual BuildRequirementsEnv install_build_requirements(const std::string& python,
                                                          const std::filesystem::path& env_dir,
                                                          const std::vector<std::string>& requirements,
                                                          bool offline) = 0;
  virtual PlanFacts plan_facts(const std::filesystem::path& tree, const std::string& python) = 0;
  // What the machine allows the offline build step (namespaces, socket covers).
  virtual NetworkIsolationProbe network_isolation() = 0;
  // How `compiler` links the C++ runtime, by a trial link (toolchain/cxx_runtime_link.h).
  virtual CxxRuntimeLink cxx_runtime_link(const std::string& compiler, const std::filesystem::path& links_dir) = 0;
  virtual WheelValidation validate(const WheelValidationRequest& request) = 0;
  // auditwheel for the wheel audit (installed once into `tools_dir`).
  virtual AuditTool audit_tool(const std::string& python, const std::filesystem::path& tools_dir, bool offline) = 0;
  // The portable setting's repair of one built wheel (audited first) into `out_dir`.
  virtual WheelRepair repair_wheel(const std::string& python, const AuditTool& tool, const std::filesystem::path& wheel,
                                   const std::filesystem::path& out_dir) = 0;
  // archbuild's sccache server for the build, linked to the compile cluster.
  virtual std::unique_ptr<CompileCluster> connect_compile_cluster(const CompileClusterRequest& request) = 0;
};

class SystemServices final : public SessionServices {
 public:
  std::string utc_now() override;
  std::string host_name() override;
  CommandRunner& build_runner() override { return runner_; }
  SourceTree checkout(const CheckoutRequest& request, const MirrorCache& mirrors) override;
  DependencyEnv prepare_dependencies(const DependencyRequest& request) override;
  BuildRequirementsEnv install_build_requirements(const std::string& python, const std::filesystem::path& env_dir,
                                                  const std::vector<std::string>& requirements, bool offline) override;
  PlanFacts plan_facts(const std::filesystem::path& tree, const std::string& python) override;
  NetworkIsolationProbe network_isolation() override;
  CxxRuntimeLink cxx_runtime_link(const std::string& compiler, const std::filesystem::path& links_dir) override;
  WheelValidation validate(const WheelValidationRequest& request) override;
  AuditTool audit_tool(const std::string& python, const std::filesystem::path& tools_dir, bool offline) override;
  WheelRepair repair_wheel(const std::string& python, const AuditTool& tool, const std::filesystem::path& wheel,
                           const std::filesystem::path& out_dir) override;
  std::unique_ptr<CompileCluster> connect_compile_cluster(const CompileClusterRequest& request) override;

 private:
  ProcessGroupRunner runner_;
  // One trial link per compiler and links dir for the whole run (the
  // dependencies a build makes first use the same compiler), once it ran.
  std::map<std::pair<std::string, std::filesystem::path>, CxxRuntimeLink> cxx_runtime_links_;
};

}  // namespace archbuild
