#pragma once

#include <filesystem>
#include <vector>

#include "cluster/cluster_setting.h"
#include "preflight/preflight.h"

namespace archbuild {

struct ClusterCheckInputs {
  ClusterSetting setting;
  const Toolchain* toolchain = nullptr;
  std::filesystem::path probe_compiler;  // the host C++ compiler
  std::filesystem::path cache_dir;       // archbuild's cache: sccache's cache and a scratch dir
};

// The compile cluster's checks for `archbuild check`: the sccache release
// against the toolkit, and the link itself (the scheduler, its build
// servers and cores, a trial compile packaged and run on a server).
std::vector<PreflightCheck> check_compile_cluster(const ClusterCheckInputs& inputs);

}  // namespace archbuild
