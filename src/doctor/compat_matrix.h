#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "doctor/fix_ladder.h"
#include "doctor/official_builds.h"

namespace archbuild {

// `archbuild doctor --matrix`: which torch build runs where. Rows are the
// official releases x CUDA variants (newest first) and the torch builds in
// archbuild's cache; columns are the devices (this machine's GPUs or each
// --device-cc); a cell is native, ptx-jit, no-kernel-image or
// driver-too-old (the driver given or found cannot run that CUDA).
struct MatrixRow {
  std::string build;    // "torch 2.15.0+cu130"
  std::string origin;   // "official" or "archbuild cache"
  std::string install;  // the index URL, or the cached build's install line
  std::vector<std::string> cells;
};

struct CompatMatrix {
  std::vector<ComputeCapability> devices;
  std::optional<CudaVersion> driver_cuda;
  std::vector<MatrixRow> rows;
};

CompatMatrix compatibility_matrix(const OfficialBuildTable& official, const std::vector<CachedTorch>& cached,
                                  const std::vector<ComputeCapability>& devices,
                                  std::optional<CudaVersion> driver_cuda);

std::string matrix_text(const CompatMatrix& matrix);
nlohmann::json matrix_json(const CompatMatrix& matrix);

}  // namespace archbuild
