#include "builder/network_plan.h"

#include <algorithm>

#include "core/strings.h"

namespace archbuild {
namespace {

// A file: store is a directory (an NFS mount works too: the kernel, not the
// step, talks to its server), reached offline; any other store is a server.
bool needs_a_server(const std::string& compiler_cache_remote) {
  const auto stores = split_any(compiler_cache_remote, " ");
  return std::ranges::any_of(stores, [](const std::string& store) { return !store.starts_with("file:"); });
}

}  // namespace

NetworkPlan plan_network(const PlanInputs& in) {
  NetworkPlan plan;
  if (in.allow_network) {
    plan.offline = false;
    plan.description = "on (--allow-network)";
  } else if (!in.compile_cluster.empty()) {
    // The build's sccache clients reach archbuild's sccache server on this
    // host's loopback, which a network namespace of its own would not have.
    plan.offline = false;
    plan.description = "on: the build's compiles go through archbuild's sccache server (compile_cluster)";
  } else if (needs_a_server(in.compiler_cache_remote)) {
    plan.offline = false;
    plan.description = "on: the compiler cache's remote storage needs it";
  } else if (in.network.mode != NetworkIsolation::unavailable) {
    plan.isolation = in.network.mode;
    plan.description = "off: the build step runs in a " + in.network.describe() + " of its own" +
                       (in.network.unix_sockets_refused ? "; unix sockets refused" : "");
  } else {
    plan.description = "off, best effort: no network namespace here (" + in.network.reason +
                       "); proxies point at a closed port and pip uses no index";
    for (const char* proxy : {"http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"})
      plan.env[proxy] = "http://127.0.0.1:9";
    plan.env["no_proxy"] = "";
    plan.env["NO_PROXY"] = "";
    plan.env["PIP_NO_INDEX"] = "1";
  }
  return plan;
}

}  // namespace archbuild
