#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace archbuild {

// What `sccache --dist-status` says of the compile cluster.
struct ClusterStatus {
  enum class State {
    connected,      // the scheduler answered: servers and their cores
    not_connected,  // configured, but the scheduler did not answer
    disabled,       // sccache has no [dist] configuration
    unreadable,     // an answer this archbuild does not know
  };
  State state = State::unreadable;
  std::string scheduler;  // as sccache names it ("http://10.0.0.5:10600/")
  unsigned servers = 0;
  unsigned cpus = 0;
  unsigned in_progress = 0;
  std::string detail;  // sccache's own words when not connected

  // "2 build servers, 32 cores (http://10.0.0.5:10600/)" or why not.
  std::string describe() const;
  nlohmann::json to_json() const;
};

// Parses `sccache --dist-status` (one JSON value: {"SchedulerStatus": [url,
// {num_servers, num_cpus, in_progress}]}, {"NotConnected": [url, why]} or
// {"Disabled": ...}). Never throws: what it cannot read is `unreadable`.
ClusterStatus parse_dist_status(const std::string& text);

// Where a build's compiles ran, from `sccache --show-stats
// --stats-format=json` of archbuild's own sccache server. sccache splits an
// nvcc call into its passes (cudafe++, cicc, ptxas, the host compiler), so
// these count passes, not nvcc calls.
struct CompileCounts {
  std::map<std::string, uint64_t> by_server;  // build server address -> compiles it ran
  uint64_t compilations = 0;                  // compiles that ran, here or on the cluster
  uint64_t cache_hits = 0;                    // compiles served from sccache's cache
  uint64_t dist_errors = 0;                   // cluster compiles that failed and ran here instead

  uint64_t on_cluster() const;
  uint64_t local() const { return compilations - std::min(compilations, on_cluster()); }
  // "12 on the cluster (10.0.0.2:10501 7, 10.0.0.3:10501 5), 3 here, 4 from the cache"
  std::string describe() const;
  nlohmann::json to_json() const;
};

// Throws std::runtime_error when `text` is not sccache's stats JSON.
CompileCounts parse_sccache_stats(const std::string& text);

struct SccacheVersion {
  int major = 0, minor = 0, patch = 0;
  auto operator<=>(const SccacheVersion&) const = default;
  std::string to_string() const;
};

// "sccache 0.16.0" -> 0.16.0.
std::optional<SccacheVersion> parse_sccache_version(const std::string& text);

}  // namespace archbuild
