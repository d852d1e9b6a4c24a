#include "cluster/sccache_reports.h"

#include <regex>
#include <stdexcept>

namespace archbuild {

namespace {

unsigned count_of(const nlohmann::json& object, const char* key) {
  auto found = object.find(key);
  return found != object.end() && found->is_number_unsigned() ? found->get<unsigned>() : 0;
}

uint64_t sum_of_counts(const nlohmann::json& stats, const char* key) {
  uint64_t total = 0;
  auto found = stats.find(key);
  if (found == stats.end() || !found->is_object()) return 0;
  auto counts = found->find("counts");
  if (counts == found->end() || !counts->is_object()) return 0;
  for (const auto& [language, count] : counts->items())
    if (count.is_number_unsigned()) total += count.get<uint64_t>();
  return total;
}

}  // namespace

std::string ClusterStatus::describe() const {
  switch (state) {
    case State::connected:
      return std::to_string(servers) + " build server" + (servers == 1 ? "" : "s") + ", " + std::to_string(cpus) +
             " core" + (cpus == 1 ? "" : "s") + " (" + scheduler + ")";
    case State::not_connected: return "scheduler " + scheduler + " not reachable: " + detail;
    case State::disabled: return "sccache has no [dist] configuration";
    case State::unreadable: return "sccache's --dist-status answer is not one archbuild reads: " + detail;
  }
  return {};
}

nlohmann::json ClusterStatus::to_json() const {
  static const char* const names[] = {"connected", "not_connected", "disabled", "unreadable"};
  return {{"state", names[static_cast<int>(state)]},
          {"scheduler", scheduler},
          {"servers", servers},
          {"cpus", cpus},
          {"in_progress", in_progress},
          {"detail", detail}};
}

ClusterStatus parse_dist_status(const std::string& text) {
  ClusterStatus status;
  const auto json = nlohmann::json::parse(text, nullptr, false);
  status.detail = text.substr(0, 200);
  if (!json.is_object() || json.size() != 1) return status;
  const auto entry = json.begin();  // no reference into items()' temporary proxy
  const std::string kind = entry.key();
  const nlohmann::json& value = entry.value();
  if (kind == "Disabled") {
    status.state = ClusterStatus::State::disabled;
    status.detail.clear();
  } else if (kind == "SchedulerStatus" && value.is_array() && value.size() == 2 && value[0].is_string() &&
             value[1].is_object()) {
    status.state = ClusterStatus::State::connected;
    status.scheduler = value[0].get<std::string>();
    status.servers = count_of(value[1], "num_servers");
    status.cpus = count_of(value[1], "num_cpus");
    status.in_progress = count_of(value[1], "in_progress");
    status.detail.clear();
  } else if (kind == "NotConnected" && value.is_array() && value.size() == 2 && value[0].is_string() &&
             value[1].is_string()) {
    status.state = ClusterStatus::State::not_connected;
    status.scheduler = value[0].get<std::string>();
    status.detail = value[1].get<std::string>();
  }
  return status;
}

uint64_t CompileCounts::on_cluster() const {
  uint64_t total = 0;
  for (const auto& [server, count] : by_server) total += count;
  return total;
}

std::string CompileCounts::describe() const {
  std::string servers;
  for (const auto& [server, count] : by_server)
    servers += (servers.empty() ? "" : ", ") + server + " " + std::to_string(count);
  return std::to_string(on_cluster()) + " on the cluster" + (servers.empty() ? "" : " (" + servers + ")") + ", " +
         std::to_string(local()) + " here, " + std::to_string(cache_hits) + " from the cache" +
         (dist_errors ? ", " + std::to_string(dist_errors) + " cluster compile" + (dist_errors == 1 ? "" : "s") +
                            " failed and ran here"
                      : "");
}

nlohmann::json CompileCounts::to_json() const {
  return {{"on_cluster", on_cluster()},
          {"local", local()},
          {"cache_hits", cache_hits},
          {"by_server", by_server},
          {"dist_errors", dist_errors}};
}

CompileCounts parse_sccache_stats(const std::string& text) {
  const auto json = nlohmann::json::parse(text, nullptr, false);
  if (!json.is_object() || !json.contains("stats") || !json["stats"].is_object())
    throw std::runtime_error("not sccache's stats JSON: " + text.substr(0, 200));
  const auto& stats = json["stats"];
  CompileCounts counts;
  if (auto dist = stats.find("dist_compiles"); dist != stats.end() && dist->is_object())
    for (const auto& [server, count] : dist->items())
      if (count.is_number_unsigned()) counts.by_server[server] = count.get<uint64_t>();
  if (auto compilations = stats.find("compilations"); compilations != stats.end() && compilations->is_number_unsigned())
    counts.compilations = compilations->get<uint64_t>();
  if (auto errors = stats.find("dist_errors"); errors != stats.end() && errors->is_number_unsigned())
    counts.dist_errors = errors->get<uint64_t>();
  counts.cache_hits = sum_of_counts(stats, "cache_hits");
  return counts;
}

std::string SccacheVersion::to_string() const {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

std::optional<SccacheVersion> parse_sccache_version(const std::string& text) {
  static const std::regex pattern(R"(sccache (\d{1,6})\.(\d{1,6})\.(\d{1,6}))");
  std::smatch match;
  if (!std::regex_search(text, match, pattern)) return std::nullopt;
  return SccacheVersion{std::stoi(match[1]), std::stoi(match[2]), std::stoi(match[3])};
}

}  // namespace archbuild
