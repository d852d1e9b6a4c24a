#include "cache/indexed_builds.h"

#include <algorithm>

#include "cache/cache_index.h"
#include "cache/simple_index.h"
#include "core/cache_layout.h"
#include "core/error.h"
#include "core/strings.h"
#include "core/system_info.h"
#include "wheel/wheel_archive.h"
#include "wheel/wheel_relabel.h"

namespace archbuild {

std::vector<IndexedBuild> indexed_builds(const std::filesystem::path& cache_dir,
                                         const std::function<bool(const std::string& label)>& label_filter) {
  const CacheLayout layout(cache_dir);
  const auto index = cache_index_paths(cache_dir);
  std::vector<IndexedBuild> builds;
  std::error_code ec;
  if (!std::filesystem::is_directory(std::filesystem::symlink_status(index.simple_dir, ec))) return builds;
  for (const auto& name : linked_wheel_names(index.simple_dir)) {
    auto parsed = WheelName::parse(name);
    if (!parsed) continue;
    const auto plus = parsed->version.find('+');
    if (plus == std::string::npos || !label_filter(parsed->version.substr(plus + 1))) continue;
    try {
      auto record = read_build_record(index.wheels_dir / name);
      if (!record || record->key.empty() || record->key.find('/') != std::string::npos) continue;
      const auto entry = layout.store() / record->key;
      const auto wheel = entry / "wheels" / name;
      if (!std::filesystem::is_regular_file(std::filesystem::symlink_status(wheel, ec))) continue;
      builds.push_back({wheel, std::move(*record), std::filesystem::last_write_time(entry / "manifest.json", ec)});
    } catch (const UserError&) {
      // an unreadable wheel says nothing; `cache verify` names it
    }
  }
  std::stable_sort(builds.begin(), builds.end(),
                   [](const IndexedBuild& a, const IndexedBuild& b) { return a.published > b.published; });
  return builds;
}

std::vector<IndexedBuild> host_builds(const std::filesystem::path& cache_dir, const std::string& recipe,
                                      const std::string& cuda) {
  std::vector<IndexedBuild> builds;
  for (auto& build : indexed_builds(cache_dir, cuda_label_filter(cuda)))
    if (build.record.recipe == recipe && build.record.cuda == cuda && build.machine() == host_machine())
      builds.push_back(std::move(build));
  return builds;
}

std::function<bool(const std::string&)> cuda_label_filter(const std::string& cuda) {
  const auto parsed = CudaVersion::parse(cuda);
  const auto prefix = parsed ? cuda_label(*parsed) : std::string();
  // The toolkit's part anywhere among the label's parts: a version with a
  // local part of its own is labelled "git1a2b3c.cu130.sm90".
  return [prefix](const std::string& label) {
    if (prefix.empty()) return true;
    for (const auto& part : split_any(label, "."))
      if (part == prefix) return true;
    return false;
  };
}

}  // namespace archbuild
