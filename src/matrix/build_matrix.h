#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "recipe/recipe.h"

namespace archbuild {

// One build of a matrix: a recipe at a ref, for an arch set, with a toolkit.
struct MatrixCell {
  std::string recipe;         // the entry: a recipe name, or pypi:NAME==VERSION
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
//   recipes = ["torch", "torchvision", "pypi:torch-scatter==2.1.2"]
//   arch_sets = ["9.0", "8.0;9.0+PTX"]
//   cuda = ["13.0"]                    # optional
//   jobs = 32                          # optional
//   [refs]                             # optional, per recipe
//   torch = ["v2.9.1", "main"]
// Cells are recipes x refs x arch sets x toolkits; a recipe's cell needs
// the cells of the recipes it depends on with the same arch set and toolkit.
// A pypi:NAME==VERSION entry (an sdist) builds with the recipe whose
// repository is pypi:NAME, else cpp-extension, and has no [refs].
// Throws UserError(bad_input) naming file, line and key.
BuildMatrix load_build_matrix(const std::filesystem::path& file, const RecipeBook& book);

// The recipe a cell builds with (its entry's, as above).
const Recipe& matrix_cell_recipe(const MatrixCell& cell, const RecipeBook& book);

}  // namespace archbuild
