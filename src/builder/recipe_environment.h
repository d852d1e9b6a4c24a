#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "builder/plan_facts.h"
#include "builder/plan_inputs.h"

namespace archbuild {

// The recipe's part of the build environment: [build.env], then the [[env]]
// rows for this ref and toolkit in file order (later rows win), then the
// variables of the [[system_library]] entries it found, placeholders
// substituted.
struct RecipeEnvironment {
  std::map<std::string, std::string> env;       // what the build gets
  std::map<std::string, std::string> key_text;  // the same before path placeholders: the key's and configure's view
  // One line per [[system_library]]: where it was found, or what the build
  // does without it ("NCCL: /usr/local/cuda/include, /usr/local/cuda/lib64").
  std::vector<std::string> libraries;
};

RecipeEnvironment plan_recipe_environment(const PlanInputs& inputs, const PlanFacts& facts,
                                          const std::filesystem::path& wheel_dir);

// A recipe word with {python}, {archbuild_data}, {source_dir} and {wheel_dir} filled in.
std::string substitute_plan_paths(std::string word, const PlanInputs& inputs, const PlanFacts& facts,
                                  const std::filesystem::path& wheel_dir);

}  // namespace archbuild
