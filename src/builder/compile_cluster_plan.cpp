#include "builder/compile_cluster_plan.h"

namespace archbuild {

CompileClusterPlan plan_compile_cluster(const PlanInputs& in, const PlanFacts& facts) {
  CompileClusterPlan plan;
  if (in.compile_cluster.empty()) return plan;
  plan.configured = true;
  plan.scheduler = in.compile_cluster;
  if (!facts.cluster) {
    plan.description = "compiles go to " + in.compile_cluster +
                       " once the build has checked the link (a trial compile; `archbuild check` runs one)";
    return plan;
  }
  const auto& link = *facts.cluster;
  if (link.port != 0) plan.env = link.client_env();  // 0: `archbuild plan`, whose server is gone
  plan.distributing = link.distributing;
  if (link.distributing) plan.cluster_cpus = link.status.cpus;
  plan.description = link.describe();
  return plan;
}

nlohmann::json CompileClusterPlan::to_json() const {
  return {{"configured", configured},
          {"distributing", distributing},
          {"scheduler", scheduler},
          {"cluster_cpus", cluster_cpus},
          {"description", description}};
}

}  // namespace archbuild
