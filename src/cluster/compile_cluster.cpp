#include "cluster/compile_cluster.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

extern char** environ;

#include <chrono>
#include <sstream>

#include <toml++/toml.h>

#include "cluster/sccache_guards.h"
#include "cluster/sccache_probe.h"
#include "core/error.h"
#include "core/log.h"
#include "core/nonce.h"
#include "core/regular_file.h"
#include "core/secrets.h"
#include "core/strings.h"
#include "core/unique_fd.h"
#include "process/run_process.h"

namespace archbuild {

namespace {

using namespace std::chrono_literals;

// A port on 127.0.0.1 free now, for the server to take.
unsigned free_loopback_port() {
  UniqueFd probe(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (!probe || ::bind(probe.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(probe.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0)
    fail_environment("compile cluster: no free port on 127.0.0.1 for archbuild's sccache server");
  return ntohs(address.sin_port);
}

class SccacheCluster final : public CompileCluster {
 public:
  explicit SccacheCluster(const CompileClusterRequest& request) : request_(request) {
    // A constructor that throws runs no destructor: the server it started
    // is stopped here (it detaches itself, so nothing else would).
    try {
      connect();
    } catch (...) {
      stop();
      throw;
    }
  }

  ~SccacheCluster() override { stop(); }

  const ClusterConnection& connection() const override { return connection_; }

 private:
  void connect() {
    auto& link = connection_;
    const auto& request = request_;
    link.scheduler_url = request.scheduler_url;
    link.config = request.state_dir / "config";
    link.log = request.state_dir / "sccache.log";
    link.cached_config = request.state_dir / "cached-config";
    // Owner-only: the config holds the token.
    std::filesystem::create_directories(request.state_dir);
    std::filesystem::permissions(request.state_dir, std::filesystem::perms::owner_all);
    std::filesystem::create_directories(request.cache_dir);
    if (!request.temp_dir.empty()) std::filesystem::create_directories(request.temp_dir);
    write_whole_file(link.log, "");  // this build's log: no earlier build's 401 read as this one's
    const auto token = request.token_file.empty() ? std::string() : read_cluster_token(request.token_file);
    const auto probe = probe_sccache_version(request.sccache);
    link.sccache_version = probe.said;
    start(request.scheduler_url, token);
    started_ = true;
    const auto& version = probe.version;
    if (!version) {
      fall_back("'" + request.sccache.string() + " --version' said '" + link.sccache_version.substr(0, 80) +
                "', not a release archbuild can check");
      return;
    }
    if (const auto unmet = unmet_sccache_guards(*version, request.cuda); !unmet.empty()) {
      fall_back("sccache " + version->to_string() + " cannot distribute CUDA " + request.cuda.str() +
                " compiles: it needs " + unmet.back().at_least.to_string() + " (" + unmet.back().why + ")");
      return;
    }
    link.status = parse_dist_status(run({"--dist-status"}, 60s).out);
    if (link.status.state != ClusterStatus::State::connected) {
      fall_back(link.status.describe());
      return;
    }
    if (link.status.servers == 0) {
      fall_back("the scheduler " + link.status.scheduler + " has no build server");
      return;
    }
    trial_compile();
  }

  // Stops the server and removes its config (the token) once it is gone.
  void stop() noexcept {
    if (!started_) return;
    started_ = false;
    try {
      run({"--stop-server"}, 60s);
      std::error_code ignored;
      std::filesystem::remove(connection_.config, ignored);
    } catch (const std::exception& error) {
      log::warning("compile cluster: stopping archbuild's sccache server: {}", error.what());
    }
  }

 public:
  CompileCounts counts() override {
    auto stats = run({"--show-stats", "--stats-format=json"}, 60s);
    if (!stats.succeeded())
      throw std::runtime_error("sccache --show-stats: " + stats.describe_status() + ": " + last_lines(stats.err, 3));
    return parse_sccache_stats(stats.out);
  }

 private:
  ProcessResult run(std::vector<std::string> arguments, std::chrono::milliseconds timeout,
                    std::map<std::string, std::optional<std::string>> extra = {}) {
    ProcessOptions options;
    // The user's own sccache settings (another server's socket, a shared
    // cache, no-daemon mode) stay theirs: archbuild's server gets none.
    for (char** entry = environ; *entry; ++entry)
      if (std::string_view name(*entry); name.starts_with("SCCACHE_"))
        options.env_overrides[std::string(name.substr(0, name.find('=')))] = std::nullopt;
    for (const auto& [name, value] : connection_.client_env()) options.env_overrides[name] = value;
    options.env_overrides["SCCACHE_ERROR_LOG"] = connection_.log.string();
    options.env_overrides["SCCACHE_LOG"] = "info";
    // Long enough for any link step; short enough that a server an
    // interrupted archbuild could not stop goes away by itself.
    options.env_overrides["SCCACHE_IDLE_TIMEOUT"] = "21600";
    // nvcc's passes see one temp dir from the server and the client alike
    // (a distributed nvcc compile fails when they differ).
    if (!request_.temp_dir.empty()) options.env_overrides["TMPDIR"] = request_.temp_dir.string();
    for (auto& [name, value] : extra) options.env_overrides[name] = std::move(value);
    options.working_dir = request_.state_dir;
    options.timeout = timeout;
    arguments.insert(arguments.begin(), request_.sccache.string());
    return run_process(arguments, options);
  }

  // Writes the config (the token in it: owner-only) and starts the server
  // on a free port; `scheduler_url` "" for compiles here only.
  void start(const std::string& scheduler_url, const std::string& token) {
    write_file_atomically(connection_.config, sccache_config_text(request_.cache_dir, scheduler_url, token),
                          std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    for (int attempt = 0;; ++attempt) {
      connection_.port = free_loopback_port();
      auto started = run({"--start-server"}, 60s);
      if (started.succeeded()) return;
      if (attempt == 2)  // a port taken between the probe and the server's bind: twice more
        fail_environment("compile cluster: archbuild's sccache server did not start (" + started.describe_status() +
                         "): " + last_lines(started.err + started.out, 3) + "; its log: " + connection_.log.string());
    }
  }

  // Compiles stay here: the server restarts without the cluster, so that
  // no compile waits on it (the counts stay this build's).
  void fall_back(const std::string& why) {
    connection_.distributing = false;
    connection_.why_local = why;
    run({"--stop-server"}, 60s);
    start("", "");
  }

  // One small C++ compile through the cluster proves the whole link: the
  // scheduler takes the token, a build server is reachable from here, and
  // sccache packages the host compiler for it.
  void trial_compile() {
    const auto source = request_.state_dir / "cluster-trial.cpp";
    write_whole_file(source, "int archbuild_cluster_trial() { return 42; }\n");
    // a define of its own each time: a source sccache's cache has would be served from there, not the cluster
    auto compiled = run({request_.probe_compiler.string(), "-c", source.string(), "-o",
                         (request_.state_dir / "cluster-trial.o").string(), "-DARCHBUILD_TRIAL=" + random_nonce()},
                        300s);
    std::string log_text;
    if (auto why = read_regular_file(connection_.log, 64u << 20, log_text); !why.empty())
      log::warning("compile cluster: sccache's log {} {}", connection_.log.string(), why);
    if (!compiled.succeeded()) {
      // The scheduler refusing the client token (sccache's words for it:
      // "Bearer auth failed", "Fixed token mismatch"; HTTP 401).
      const auto refused = [](const std::string& text) {
        return text.find("Error 401") != std::string::npos || text.find("token mismatch") != std::string::npos;
      };
      if (refused(log_text) || refused(compiled.err))
        fail_environment("compile cluster " + request_.scheduler_url + " refused archbuild's client token" +
                         (request_.token_file.empty() ? std::string(" (compile_cluster_token_file is not set)")
                                                      : " from " + request_.token_file.string()) +
                         ": sccache would fail every compile; fix the token or unset compile_cluster (log: " +
                         connection_.log.string() + ")");
      fall_back("a trial compile through the cluster failed (" + compiled.describe_status() +
                "): " + last_lines(compiled.err, 3));
      return;
    }
    CompileCounts trial = counts();
    if (trial.by_server.empty()) {
      fall_back("a trial compile did not run on the cluster (" + std::to_string(trial.dist_errors) +
                " cluster errors; sccache's log: " + connection_.log.string() + ")");
      return;
    }
    connection_.distributing = true;
    connection_.trial = "a trial compile ran on " + trial.by_server.begin()->first;
    run({"--zero-stats"}, 60s);
  }

  CompileClusterRequest request_;
  ClusterConnection connection_;
  bool started_ = false;
};

}  // namespace

std::map<std::string, std::string> ClusterConnection::client_env() const {
  return {{"SCCACHE_CONF", config.string()},
          {"SCCACHE_SERVER_PORT", std::to_string(port)},
          {"SCCACHE_CACHED_CONF", cached_config.string()}};
}

std::string ClusterConnection::describe() const {
  if (distributing) return "compiles go to the cluster: " + status.describe() + "; " + trial;
  return "compiles stay on this machine: " + why_local;
}

nlohmann::json ClusterConnection::to_json() const {
  return {{"scheduler", scheduler_url},
          {"status", status.to_json()},
          {"distributing", distributing},
          {"why_local", why_local},
          {"trial", trial},
          {"sccache", sccache_version},
          {"server_port", port},
          {"log", log.string()}};
}

std::unique_ptr<CompileCluster> connect_compile_cluster(const CompileClusterRequest& request) {
  return std::make_unique<SccacheCluster>(request);
}

ClusterConnection probe_compile_cluster(CompileClusterRequest request, const std::string& purpose) {
  const auto scratch = request.cache_dir / (purpose + "-" + std::to_string(::getpid()) + "-" + random_nonce());
  request.state_dir = scratch;
  request.temp_dir = scratch / "tmp";
  std::error_code ignored;
  try {
    auto link = connect_compile_cluster(request)->connection();  // the server stops here
    link.port = 0;
    std::filesystem::remove_all(scratch, ignored);
    return link;
  } catch (...) {
    std::filesystem::remove_all(scratch, ignored);
    throw;
  }
}

std::string sccache_config_text(const std::filesystem::path& cache_dir, const std::string& scheduler_url,
                                const std::string& token) {
  toml::table config;
  config.insert("cache", toml::table{{"disk", toml::table{{"dir", (cache_dir / "disk").string()}}}});
  if (!scheduler_url.empty()) {
    toml::table dist{{"scheduler_url", scheduler_url},
                     {"cache_dir", (cache_dir / "dist-client").string()},
                     {"toolchains", toml::array{}}};
    if (!token.empty()) dist.insert("auth", toml::table{{"type", "token"}, {"token", token}});
    config.insert("dist", std::move(dist));
  }
  std::ostringstream text;
  text << "# archbuild's sccache server for one build (written by archbuild)\n" << config << "\n";
  return text.str();
}

std::string read_cluster_token(const std::filesystem::path& file) {
  std::string content;
  if (auto why = read_regular_file(file, 64 << 10, content); !why.empty())
    fail_bad_input("compile_cluster_token_file " + file.string() + " " + why);
  auto token = trim(content);
  if (token.empty()) fail_bad_input("compile_cluster_token_file " + file.string() + " is empty");
  secrets::remember(token);
  for (char c : token)
    if (c < 0x21 || c > 0x7e)
      fail_bad_input("compile_cluster_token_file " + file.string() +
                     ": the token must be one line of visible ASCII (it goes in an HTTP header)");
  return token;
}

}  // namespace archbuild
