#include "cluster/sccache_probe.h"

#include <chrono>

#include "core/strings.h"
#include "process/run_process.h"

namespace archbuild {

SccacheProbe probe_sccache_version(const std::filesystem::path& sccache) {
  ProcessOptions options;
  options.timeout = std::chrono::seconds(30);
  SccacheProbe probe;
  probe.said = trim(run_process({sccache.string(), "--version"}, options).out);
  probe.version = parse_sccache_version(probe.said);
  return probe;
}

}  // namespace archbuild
