#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "recipe/recipe.h"

namespace archbuild {

// One build of a matrix: a recipe at a ref, for an arch set, with a toolkit.
struct MatrixCell {
  std::string recipe;
  std::string ref;            // "" = the recipe's default
  std::string arch;           // an arch spec: "9.0", "8.0;9.0+PTX"
  std::string cuda;           // "" = the installed toolkit
  std::vector<size_t> needs;  // cells that must succeed first (dependencies of the same arch set and toolkit)
  std::string name() const;   // "torchvision v0.24.1 9.0 (CUDA 13.0)"
};

struct BuildMatrix {
  std::vector<MatrixCell> cells;  // dependencies before dependents
  unsigned jobs = 0;              // global compile-job budget; 0 = this machine's cores
};

// Reads a matrix file:
//   recipes = ["torch", "torchvision"]
//   arch_sets = ["9.0", "8.0;9.0+PTX"]
//   cuda = ["13.0"]                    # optional
//   jobs = 32                          # optional
//   [refs]                             # optional, per recipe
//   torch = ["v2.9.1", "main"]
// Cells are recipes x refs x arch sets x toolkits; a recipe's cell needs
// the cells of the recipes it depends on with the same arch set and toolkit.
// Throws UserError(bad_input) naming file, line and key.
BuildMatrix load_build_matrix(const std::filesystem::path& file, const RecipeBook& book);

}  // namespace archbuild
