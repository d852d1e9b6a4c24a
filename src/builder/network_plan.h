#pragma once

#include <map>
#include <string>

#include "builder/plan_inputs.h"
#include "process/network_isolation.h"

namespace archbuild {

// Offline by design: what the wheel holds was compiled here from the named
// source, not downloaded by the project's setup.py.
struct NetworkPlan {
  bool offline = true;
  // In a network namespace of its own unless `unavailable`.
  NetworkIsolation isolation = NetworkIsolation::unavailable;
  std::string description;                 // "off: the build step runs in a network namespace of its own"
  std::map<std::string, std::string> env;  // best effort without a namespace: proxies to a closed port
};

NetworkPlan plan_network(const PlanInputs& inputs);

}  // namespace archbuild
