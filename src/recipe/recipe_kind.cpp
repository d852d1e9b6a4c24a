#include "recipe/recipe_kind.h"

namespace archbuild {

const std::vector<RecipeKind>& recipe_kinds() {
  static const std::vector<RecipeKind> kinds = {
      {"pytorch", "PyTorch and its domain libraries"},
      {"attention-gemm", "Attention and GEMM kernels"},
      {"state-space-conv", "State-space and convolution kernels"},
      {"quantization", "Quantization kernels"},
      {"3d-graphics", "3D and graphics (rasterizers, neural fields, point clouds)"},
      {"sparse-graph", "Sparse and graph ops"},
      {"detection", "Detection ops"},
      {"optimizer-norm", "Fused optimizers and normalizations"},
      {"loss-other", "Losses and other ops"},
      {"example", "Examples and the generic recipe"},
      {kDefaultRecipeKind, "Other (no kind given)"},
  };
  return kinds;
}

std::optional<RecipeKind> find_recipe_kind(std::string_view name) {
  for (const auto& kind : recipe_kinds())
    if (kind.name == name) return kind;
  return std::nullopt;
}

std::string recipe_kind_names() {
  std::string names;
  for (const auto& kind : recipe_kinds()) {
    if (!names.empty()) names += ", ";
    names += kind.name;
  }
  return names;
}

}  // namespace archbuild
