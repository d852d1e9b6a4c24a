#pragma once

#include <filesystem>

#include "recipe/recipe.h"

namespace archbuild {

// Reads one recipe file (recipes/NAME.toml) and validates it: docs/RECIPES.md.
// Throws UserError(bad_input) naming the file, line and key of a bad entry.
// A site recipe (`site_recipe`, from the recipe_path setting) finds its
// kernel_test beside it first, then in the data dir, and holds it as an
// absolute path; a built-in one's stays relative to the data dir.
Recipe parse_recipe_file(const std::filesystem::path& file, const std::filesystem::path& patches_dir, bool site_recipe);

}  // namespace archbuild
