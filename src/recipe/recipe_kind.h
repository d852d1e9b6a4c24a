#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace archbuild {

// What a recipe's package is for, so `archbuild recipes` can list the catalog
// by kind. The names are the recipe files' `kind` values.
struct RecipeKind {
  std::string_view name;   // "attention-gemm"
  std::string_view title;  // "Attention and GEMM kernels"
};

// Every kind, in the order `archbuild recipes` lists them.
const std::vector<RecipeKind>& recipe_kinds();

// The kind of that name, or none.
std::optional<RecipeKind> find_recipe_kind(std::string_view name);

// "pytorch, attention-gemm, ...": for error messages.
std::string recipe_kind_names();

// A recipe without a `kind` (a site recipe written before kinds existed).
inline constexpr std::string_view kDefaultRecipeKind = "other";

}  // namespace archbuild
