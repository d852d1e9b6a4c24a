#include "cache/cache_command_results.h"

#include "cache/store_listing.h"

namespace archbuild {

namespace {

std::vector<std::string> cache_result_path_texts(const std::vector<std::filesystem::path>& paths) {
  std::vector<std::string> texts;
  for (const auto& path : paths) texts.push_back(path.string());
  return texts;
}

}  // namespace

nlohmann::json verify_result_json(const LocalVerifyResult& result) {
  nlohmann::json problems = nlohmann::json::object();
  for (const auto& entry : result.entries) problems[entry.hash] = entry.problems;
  return {{"ok", result.ok()},
          {"entries", result.entries.size()},
          {"bad_entries", result.bad_entries()},
          {"problems", problems},
          {"index_problems", result.index_problems},
          {"unfinished_publishes", cache_result_path_texts(result.unfinished_publishes)}};
}

ExitCode verify_exit_code(const LocalVerifyResult& result) {
  return result.ok() ? ExitCode::success : ExitCode::work_failed;
}

nlohmann::json gc_removed_json(const GcResult& result) {
  nlohmann::json removed = nlohmann::json::array();
  for (const auto& step : result.steps) {
    if (!step.removed) continue;
    auto json = store_entry_json(step.entry);
    json["bytes"] = step.bytes;  // its wheels are gone by now
    removed.push_back(std::move(json));
  }
  return removed;
}

nlohmann::json gc_result_json(const GcResult& result, size_t keep, bool dry_run,
                              const std::vector<std::string>& stale_downloads) {
  return {{"dry_run", dry_run},
          {"keep", keep},
          {"removed", gc_removed_json(result)},
          {"freed_bytes", result.freed_bytes},
          {"unfinished_publishes_removed", cache_result_path_texts(result.leftovers)},
          {"stale_downloads_removed", stale_downloads}};
}

nlohmann::json pushed_index_json(const PushResult& result, const std::filesystem::path& dest) {
  return {{"dest", dest.string()},
          {"index", result.index.simple_dir.string()},
          {"wheels_in_index", result.index.wheels.size()}};
}

nlohmann::json key_differences_json(const std::vector<KeyDifference>& differences) {
  auto list = nlohmann::json::array();
  for (const auto& d : differences) list.push_back({{"key", d.key}, {"a", d.before}, {"b", d.after}});
  return {{"same", differences.empty()}, {"differences", list}};
}

ExitCode key_differences_exit_code(const std::vector<KeyDifference>& differences) {
  return differences.empty() ? ExitCode::success : ExitCode::work_failed;
}

}  // namespace archbuild
