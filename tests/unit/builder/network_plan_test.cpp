#include "builder/network_plan.h"

#include <gtest/gtest.h>

namespace archbuild {
namespace {

PlanInputs with_a_namespace(std::string compiler_cache_remote) {
  PlanInputs in;
  in.network.mode = NetworkIsolation::network_namespace;
  in.compiler_cache_remote = std::move(compiler_cache_remote);
  return in;
}

TEST(NetworkPlan, AFileCompilerCacheKeepsTheStepOfflineAndAServerOpensIt) {
  auto plan = plan_network(with_a_namespace("file:/shared/ccache|read-only"));
  EXPECT_TRUE(plan.offline);
  EXPECT_EQ(plan.isolation, NetworkIsolation::network_namespace);

  for (const char* remote : {"redis://cache:6379", "file:/shared/ccache redis://cache:6379", "redis+unix:/run/r.sock",
                             "http://cache/ccache/"}) {
    plan = plan_network(with_a_namespace(remote));
    EXPECT_FALSE(plan.offline) << remote;
    EXPECT_EQ(plan.isolation, NetworkIsolation::unavailable) << remote;
    EXPECT_NE(plan.description.find("remote storage"), std::string::npos) << remote;
  }
}

}  // namespace
}  // namespace archbuild
