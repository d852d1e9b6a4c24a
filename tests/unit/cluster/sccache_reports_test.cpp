#include "cluster/sccache_reports.h"

#include <gtest/gtest.h>
#include <toml++/toml.h>

#include "cluster/cluster_setting.h"
#include "cluster/compile_cluster.h"
#include "cluster/sccache_guards.h"
#include "core/error.h"
#include "test_support.h"

using namespace archbuild;

// The answers below are sccache 0.16.0's, copied from a real cluster
// (a scheduler and two build servers on loopback).
TEST(SccacheReports, DistStatusOfEachKind) {
  auto up = parse_dist_status(
      R"({"SchedulerStatus":["http://10.231.0.1:10600/",{"num_servers":2,"num_cpus":4,"in_progress":1}]})");
  EXPECT_EQ(up.state, ClusterStatus::State::connected);
  EXPECT_EQ(up.servers, 2u);
  EXPECT_EQ(up.cpus, 4u);
  EXPECT_EQ(up.in_progress, 1u);
  EXPECT_EQ(up.describe(), "2 build servers, 4 cores (http://10.231.0.1:10600/)");
  auto down = parse_dist_status(
      R"({"NotConnected":["http://10.231.0.1:10699/","enabled, not connected, will retry in 30.0s"]})");
  EXPECT_EQ(down.state, ClusterStatus::State::not_connected);
  EXPECT_EQ(down.describe(),
            "scheduler http://10.231.0.1:10699/ not reachable: enabled, not connected, will retry in 30.0s");
  EXPECT_EQ(parse_dist_status(R"({"Disabled":"disabled"})").state, ClusterStatus::State::disabled);
  for (const char* odd : {"", "not json", "[]", R"({"SchedulerStatus":"x"})", R"({"a":1,"b":2})",
                          R"({"SchedulerStatus":["u",{"num_servers":-3}]})"}) {
    auto status = parse_dist_status(odd);
    if (std::string(odd).find("-3") != std::string::npos) {
      EXPECT_EQ(status.servers, 0u) << odd;  // a negative count reads as none
    } else {
      EXPECT_EQ(status.state, ClusterStatus::State::unreadable) << odd;
    }
  }
}

TEST(SccacheReports, StatsSayWhereCompilesRan) {
  auto counts = parse_sccache_stats(R"({"stats":{"compile_requests":1,"compilations":7,
      "cache_hits":{"counts":{"CUDA":2,"PTX":1},"adv_counts":{}},
      "dist_compiles":{"10.231.0.2:10501":4,"10.231.0.3:10501":2},"dist_errors":1}})");
  EXPECT_EQ(counts.on_cluster(), 6u);
  EXPECT_EQ(counts.local(), 1u);
  EXPECT_EQ(counts.cache_hits, 3u);
  EXPECT_EQ(counts.describe(),
            "6 on the cluster (10.231.0.2:10501 4, 10.231.0.3:10501 2), 1 here, 3 from the cache, 1 cluster compile "
            "failed and ran here");
  EXPECT_EQ(counts.to_json()["by_server"]["10.231.0.3:10501"], 2);
  EXPECT_THROW(parse_sccache_stats("{}"), std::runtime_error);
  EXPECT_THROW(parse_sccache_stats("sccache: error"), std::runtime_error);
  // More cluster compiles than compilations (another sccache's counting) never underflows.
  EXPECT_EQ(parse_sccache_stats(R"({"stats":{"compilations":1,"dist_compiles":{"a":5}}})").local(), 0u);
}

TEST(SccacheReports, Version) {
  EXPECT_EQ(parse_sccache_version("sccache 0.16.0\n")->to_string(), "0.16.0");
  EXPECT_LT(*parse_sccache_version("sccache 0.8.2"), (SccacheVersion{0, 9, 0}));
  EXPECT_FALSE(parse_sccache_version("ccache version 4.8"));
  EXPECT_FALSE(parse_sccache_version("sccache 99999999999.1.1"));
}

TEST(CompileClusterConfig, TheTokenIsOnlyInTheDistSection) {
  const std::string token = "s3cr\"e't";
  auto config = toml::parse(sccache_config_text("/c/sccache", "http://10.0.0.5:10600", token));
  EXPECT_EQ(config["dist"]["scheduler_url"].value<std::string>(), "http://10.0.0.5:10600");
  EXPECT_EQ(config["dist"]["auth"]["token"].value<std::string>(), token);  // quoted as TOML by toml++
  EXPECT_EQ(config["dist"]["auth"]["type"].value<std::string>(), "token");
  EXPECT_EQ(config["cache"]["disk"]["dir"].value<std::string>(), "/c/sccache/disk");
  auto local = sccache_config_text("/c/sccache", "", "");
  EXPECT_EQ(local.find("[dist"), std::string::npos) << local;
}

TEST(CompileClusterConfig, TokenFile) {
  TempDir dir{"archbuild-token"};
  write(dir.path / "token", "  abc-123\n");
  EXPECT_EQ(read_cluster_token(dir.path / "token"), "abc-123");
  write(dir.path / "empty", "\n");
  write(dir.path / "two", "a b\n");
  for (const char* bad : {"missing", "empty", "two"}) {
    try {
      read_cluster_token(dir.path / bad);
      ADD_FAILURE() << bad;
    } catch (const UserError& error) {
      EXPECT_EQ(error.code(), ExitCode::bad_input);
      EXPECT_NE(std::string(error.what()).find((dir.path / bad).string()), std::string::npos) << error.what();
    }
  }
}

TEST(SccacheGuards, EachToolkitNamesTheReleaseItNeeds) {
  auto unmet = [](SccacheVersion version, CudaVersion cuda) {
    std::vector<std::string> needs;
    for (const auto& guard : unmet_sccache_guards(version, cuda)) needs.push_back(guard.at_least.to_string());
    return needs;
  };
  EXPECT_EQ(unmet({0, 8, 2}, {12, 4}), std::vector<std::string>{"0.9.0"});
  EXPECT_TRUE(unmet({0, 9, 1}, {12, 6}).empty());
  EXPECT_EQ(unmet({0, 9, 1}, {12, 8}), std::vector<std::string>{"0.10.0"});
  EXPECT_TRUE(unmet({0, 16, 0}, {13, 0}).empty());  // the tests' cluster
  EXPECT_EQ(unmet({0, 16, 0}, {13, 3}), std::vector<std::string>{"0.18.0"});
  EXPECT_EQ(unmet({0, 8, 0}, {13, 4}), (std::vector<std::string>{"0.9.0", "0.10.0", "0.18.0"}));
}
