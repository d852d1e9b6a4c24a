#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "arch/cuda_version.h"
#include "cluster/sccache_reports.h"

namespace archbuild {

// A build's link to an sccache-dist compile cluster. archbuild runs an
// sccache server of its own for each build (its own config, port and log,
// under archbuild's dirs), so that the user's sccache is left alone and the
// counts it reports are this build's.
struct CompileClusterRequest {
  std::string scheduler_url;             // the compile_cluster setting
  std::filesystem::path token_file;      // compile_cluster_token_file; "" uses sccache's default client auth
  std::filesystem::path sccache;         // the sccache executable
  std::filesystem::path state_dir;       // config, log, trial compile: <out>/sccache
  std::filesystem::path cache_dir;       // sccache's local cache and toolchain packages: <cache>/sccache
  std::filesystem::path temp_dir;        // the build's TMPDIR, which the server must share with its clients
  std::filesystem::path probe_compiler;  // the host C++ compiler a trial compile runs through the cluster
  CudaVersion cuda;                      // the build's toolkit: the sccache release it needs
};

struct ClusterConnection {
  std::string scheduler_url;
  ClusterStatus status;
  bool distributing = false;  // compiles go to the cluster
  std::string why_local;      // when not, why
  std::string trial;          // "a trial compile ran on 10.0.0.2:10501"
  std::string sccache_version;
  unsigned port = 0;  // the server's, on 127.0.0.1
  std::filesystem::path config;
  std::filesystem::path log;
  std::filesystem::path cached_config;

  // What every sccache of the build gets: archbuild's server and config.
  std::map<std::string, std::string> client_env() const;
  // "compiles go to the cluster: 2 build servers, 4 cores (...); a trial compile ran on ..." or why not.
  std::string describe() const;
  nlohmann::json to_json() const;
};

class CompileCluster {
 public:
  virtual ~CompileCluster() = default;
  virtual const ClusterConnection& connection() const = 0;
  // Where the build's compiles ran since the connection was made.
  virtual CompileCounts counts() = 0;
};

// Starts archbuild's sccache server for a build and checks the link with a
// trial compile. The scheduler down, no build server, or a trial compile
// that did not reach the cluster: compiles stay on this machine (the
// connection says why). A token the scheduler refuses is an error
// (UserError, environment): sccache fails every compile then rather than
// compiling here. The server stops when the object goes.
std::unique_ptr<CompileCluster> connect_compile_cluster(const CompileClusterRequest& request);

// The link checked once and let go (`archbuild check`, `archbuild plan`): a
// server started from a scratch dir of its own under `request.cache_dir`
// (named `purpose`-PID-RANDOM: containers sharing a cache repeat pids),
// stopped, and the dir removed, also when connecting throws. The returned
// connection's port is 0: its server is gone.
ClusterConnection probe_compile_cluster(CompileClusterRequest request, const std::string& purpose);

// sccache's config for archbuild's server (TOML): its local cache and, when
// `scheduler_url` is not empty, the cluster and the client token.
std::string sccache_config_text(const std::filesystem::path& cache_dir, const std::string& scheduler_url,
                                const std::string& token);

// The client token from `file`: its first line, trimmed. Throws UserError
// (bad input) naming the file when it is missing, empty or not one line of
// visible ASCII (an HTTP header value).
std::string read_cluster_token(const std::filesystem::path& file);

}  // namespace archbuild
