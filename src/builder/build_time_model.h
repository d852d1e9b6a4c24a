#pragma once

#include <optional>
#include <string>
#include <vector>

#include "builder/build_history.h"
#include "recipe/recipe.h"

namespace archbuild {

// The build about to run, as the model sees it.
struct ForecastRequest {
  std::string recipe;
  std::string source;  // only builds of this source count ("" matches every record, for older callers)
  std::string ref;
  std::string compile_inputs;
  size_t code_images = 1;
  unsigned parallelism = 1;  // compiles at once
  unsigned nvcc_threads = 1;
  unsigned cores = 1;
  bool compile_cache = false;
  bool clean = true;  // no earlier build in the work tree (else ninja may skip much of it)
  std::optional<RecipeEstimate> estimate;
};

struct BuildForecast {
  std::optional<double> seconds;  // the build step's wall time
  bool from_history = false;
  bool warm = false;
  // One line for humans: what it was scaled from, or the recipe's model.
  std::string basis;
};

// The model (docs/ARCHITECTURE.md#build-time): an earlier build's steps
// scaled to this one. nvcc step time per call is h + d x images (images
// over nvcc --threads: they compile at once); the ratio d/h is fitted from
// two earlier builds of one ref with different image counts, else
// kImageCostRatio. Step time divides over min(parallelism,
// cores) at the earlier build's utilization (better when fewer slots);
// configure and the wheel stay as they were. A compile cache that already
// holds these compile inputs: an earlier warm build's time, else
// kWarmShare of the compile steps. Only clean builds (every step ran) are
// scaled from, when there is one. The forecast is a clean build's: a work
// tree with an earlier build in it may take less. Without history: the
// recipe's estimate over the cores. Only records of the same source count:
// the generic recipe builds many projects, and one's time says nothing of
// another's.
BuildForecast forecast_build_time(const std::vector<BuildTimeRecord>& history, const ForecastRequest& request);

// Measured with nvcc 13.0 on a small kernel: 0.95 s for one image, 2.0 s for
// four (h 0.6 s, d 0.35 s); PyTorch's kernels are heavier per image (user
// reports: all archs 5-7x one), so the default sits between.
inline constexpr double kImageCostRatio = 1.0;
// ccache-warm rebuilds of PyTorch take minutes instead of an hour.
inline constexpr double kWarmShare = 0.1;

}  // namespace archbuild
