#include "cluster/sccache_guards.h"

namespace archbuild {

const std::vector<SccacheGuard>& sccache_guards() {
  static const std::vector<SccacheGuard> guards = {
      {{0, 9, 0},
       {0, 0},
       "sccache distributes nvcc from 0.9.0 on, splitting each call with nvcc --dryrun into cudafe++, cicc and "
       "ptxas (mozilla/sccache#2247); older releases send `nvcc -x cu-cpp-output` to the build servers, which nvcc "
       "refuses"},
      {{0, 10, 0},
       {12, 8},
       "CUDA 12.8's cudafe++ writes a new module id on every run: sccache before 0.10.0 serves cached PTX whose "
       "device symbols do not match the host code (mozilla/sccache#2324)"},
      {{0, 18, 0},
       {13, 3},
       "nvcc 13.3 adds --simt-only to cicc's and cudafe++'s lines of --dryrun, which sccache before 0.18.0 misreads "
       "(\"fatbinary fatal: Could not open input file\"; mozilla/sccache#2722)"},
  };
  return guards;
}

std::vector<SccacheGuard> unmet_sccache_guards(const SccacheVersion& version, const CudaVersion& cuda) {
  std::vector<SccacheGuard> unmet;
  for (const auto& guard : sccache_guards())
    if (cuda >= guard.from_cuda && version < guard.at_least) unmet.push_back(guard);
  return unmet;
}

}  // namespace archbuild
