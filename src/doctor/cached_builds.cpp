#include "doctor/cached_builds.h"

#include "arch/arch_spec.h"
#include "cache/indexed_builds.h"
#include "cache/install_lines.h"
#include "core/cache_layout.h"
#include "core/log.h"
#include "core/strings.h"

namespace archbuild {

std::vector<CachedTorch> cached_torch_builds(const std::filesystem::path& cache_dir) {
  std::vector<CachedTorch> builds;
  try {
    for (const auto& build : indexed_builds(cache_dir, [](const std::string&) { return true; })) {
      if (build.record.recipe != "torch") continue;
      CachedTorch cached{build.record.version, CudaVersion::parse(build.record.cuda), build.record.targets.targets(),
                         "", build.machine()};
      auto lines = install_lines({build.wheel}, CacheLayout(cache_dir).simple_index());
      cached.install_line = lines.empty() ? "" : lines.front();
      builds.push_back(std::move(cached));
    }
  } catch (const std::exception& e) {
    log::verbose("doctor: the cache's builds are left out: {}", e.what());
  }
  return builds;
}

std::vector<CachedTorch> built_for(const std::vector<CachedTorch>& builds, const std::string& machine) {
  std::vector<CachedTorch> out;
  for (const auto& build : builds)
    if (build.machine == machine) out.push_back(build);
  return out;
}

}  // namespace archbuild
