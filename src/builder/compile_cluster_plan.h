#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "builder/plan_facts.h"
#include "builder/plan_inputs.h"

namespace archbuild {

// Where a build's compiles run: here, or on an sccache-dist compile cluster
// through archbuild's own sccache server (cluster/compile_cluster.h).
struct CompileClusterPlan {
  bool configured = false;    // the compile_cluster setting names a scheduler
  bool distributing = false;  // the link is checked: compiles go there
  std::string scheduler;
  unsigned cluster_cpus = 0;               // what the job planner adds to this machine's cores
  std::string description;                 // where compiles go and why; "" when not configured
  std::map<std::string, std::string> env;  // SCCACHE_CONF, SCCACHE_SERVER_PORT: archbuild's server

  nlohmann::json to_json() const;
};

CompileClusterPlan plan_compile_cluster(const PlanInputs& inputs, const PlanFacts& facts);

}  // namespace archbuild
