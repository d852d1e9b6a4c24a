#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "cluster/sccache_reports.h"

namespace archbuild {

// What `sccache --version` says (the preflight check and the build's link
// to the cluster both ask): its words, trimmed, and the release in them.
struct SccacheProbe {
  std::string said;
  std::optional<SccacheVersion> version;  // nullopt: not sccache, or it failed
};
SccacheProbe probe_sccache_version(const std::filesystem::path& sccache);

}  // namespace archbuild
