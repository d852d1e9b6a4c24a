#include "builder/ninja_trace.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace archbuild {

std::vector<NinjaStep> read_ninja_log(const std::filesystem::path& path, uint64_t offset) {
  std::ifstream in(path);
  std::error_code ec;
  if (offset > 0 && offset <= std::filesystem::file_size(path, ec)) in.seekg(static_cast<std::streamoff>(offset));
  std::string line;
  std::vector<NinjaStep> steps;
  long previous_end = -1;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    NinjaStep step;
    std::string mtime;
    std::string tab_separated_target;
    if (!(fields >> step.start_ms >> step.end_ms >> mtime)) continue;
    // target is the 4th tab-separated field (it may contain spaces)
    size_t tabs = 0, begin = 0;
    for (size_t i = 0; i < line.size() && tabs < 4; ++i)
      if (line[i] == '\t' && ++tabs == 3) begin = i + 1;
    auto end = line.find('\t', begin);
    step.target = line.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    // Within one build, steps are appended as they finish (end times grow).
    if (previous_end >= 0 && step.end_ms < previous_end) steps.clear();
    previous_end = step.end_ms;
    steps.push_back(step);
  }
  // Latest entry per target wins (ninja appends on rebuilds).
  std::vector<NinjaStep> unique;
  for (auto it = steps.rbegin(); it != steps.rend(); ++it)
    if (std::none_of(unique.begin(), unique.end(), [&](const NinjaStep& s) { return s.target == it->target; }))
      unique.push_back(*it);
  std::sort(unique.begin(), unique.end(),
            [](const NinjaStep& a, const NinjaStep& b) { return a.start_ms < b.start_ms; });
  return unique;
}

nlohmann::json chrome_trace(const std::vector<NinjaStep>& steps) {
  std::vector<long> lane_free;  // end time per lane
  auto events = nlohmann::json::array();
  for (const auto& step : steps) {
    size_t lane = 0;
    while (lane < lane_free.size() && lane_free[lane] > step.start_ms) ++lane;
    if (lane == lane_free.size()) lane_free.push_back(0);
    lane_free[lane] = step.end_ms;
    events.push_back({{"name", step.target},
                      {"cat", "build"},
                      {"ph", "X"},
                      {"ts", step.start_ms * 1000},
                      {"dur", step.duration_ms() * 1000},
                      {"pid", 0},
                      {"tid", lane}});
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

std::vector<NinjaStep> slowest_steps(std::vector<NinjaStep> steps, size_t count) {
  std::sort(steps.begin(), steps.end(),
            [](const NinjaStep& a, const NinjaStep& b) { return a.duration_ms() > b.duration_ms(); });
  if (steps.size() > count) steps.resize(count);
  return steps;
}

std::vector<std::filesystem::path> find_ninja_logs(const std::filesystem::path& root,
                                                   std::filesystem::file_time_type since) {
  std::vector<std::filesystem::path> logs;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(
           root, std::filesystem::directory_options::skip_permission_denied, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it.depth() > 5) it.disable_recursion_pending();
    if (it->path().filename() == ".git") it.disable_recursion_pending();
    if (it->path().filename() == ".ninja_log" && it->last_write_time(ec) >= since) logs.push_back(it->path());
  }
  return logs;
}

}  // namespace archbuild

namespace archbuild {

std::map<std::filesystem::path, uint64_t> ninja_log_sizes(const std::filesystem::path& root) {
  std::map<std::filesystem::path, uint64_t> sizes;
  std::error_code ec;
  for (const auto& path : find_ninja_logs(root, std::filesystem::file_time_type::min()))
    sizes[path] = std::filesystem::file_size(path, ec);
  return sizes;
}

}  // namespace archbuild
