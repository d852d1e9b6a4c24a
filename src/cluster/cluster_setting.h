#pragma once

#include <filesystem>
#include <string>

#include "config/settings.h"

namespace archbuild {

// The compile_cluster and compile_cluster_token_file settings, checked.
struct ClusterSetting {
  std::string scheduler_url;  // "" when no cluster is configured
  std::filesystem::path token_file;
  bool configured() const { return !scheduler_url.empty(); }
};

// Throws UserError(bad_input) naming the setting and where it came from: a
// URL that is not http(s)://HOST[:PORT][/], a cluster without
// compiler_launcher = sccache (only sccache distributes compiles), a token
// file without a cluster.
ClusterSetting resolve_cluster_setting(const Settings& settings);

}  // namespace archbuild
