#pragma once

#include <string>
#include <vector>

#include "arch/cuda_version.h"
#include "cluster/sccache_reports.h"

namespace archbuild {

// A release of sccache a distributed nvcc build needs, and why
// (docs/MATRIX.md "Which sccache").
struct SccacheGuard {
  SccacheVersion at_least;
  CudaVersion from_cuda;  // the toolkits it applies to: this one and newer ({0, 0}: every toolkit)
  std::string why;
};

const std::vector<SccacheGuard>& sccache_guards();

// The guards `version` misses for a build with `cuda`: empty when it is new enough.
std::vector<SccacheGuard> unmet_sccache_guards(const SccacheVersion& version, const CudaVersion& cuda);

}  // namespace archbuild
