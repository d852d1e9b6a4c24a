#include "matrix/build_matrix.h"

#include <algorithm>
#include <functional>
#include <set>

#include <toml++/toml.h>

#include "arch/arch_spec.h"
#include "arch/cuda_version.h"
#include "config/toml_file.h"
#include "core/error.h"
#include "recipe/repository_url.h"
#include "source/git_ref_name.h"
#include "source/pypi_sdist.h"
#include "toolchain/toolkit_facts.h"

namespace archbuild {

std::string MatrixCell::name() const {
  return recipe + (ref.empty() ? "" : " " + ref) + " " + arch + (cuda.empty() ? "" : " (CUDA " + cuda + ")");
}

namespace {

[[noreturn]] void bad(const std::filesystem::path& file, const toml::node* node, const std::string& key,
                      const std::string& what) {
  std::string line = node ? ":" + std::to_string(node->source().begin.line) : "";
  fail_bad_input(file.string() + line + ": key '" + key + "': " + what);
}

std::vector<std::string> strings(const std::filesystem::path& file, const toml::node* node, const std::string& key,
                                 bool required) {
  if (!node) {
    if (required) fail_bad_input(file.string() + ": key '" + key + "' is missing");
    return {};
  }
  const auto* array = node->as_array();
  if (!array || array->empty()) bad(file, node, key, "expected a non-empty array of strings");
  std::vector<std::string> out;
  for (const auto& item : *array) {
    auto text = item.value<std::string>();
    if (!text || text->empty()) bad(file, &item, key, "expected a non-empty string");
    out.push_back(*text);
  }
  return out;
}

// The recipe an entry builds with: a recipe by name, or for pypi:NAME==VERSION
// the recipe of that PyPI project (RecipeBook::find_by_pypi_name), else cpp-extension. Null for an unknown name.
const Recipe* entry_recipe(const std::string& entry, const RecipeBook& book) {
  if (!is_pypi_repository(entry)) return book.find(entry);
  auto spec = parse_pypi_spec(entry);
  const Recipe* recipe = book.find_by_pypi_name(spec.name);
  return recipe ? recipe : book.find("cpp-extension");
}

}  // namespace

const Recipe& matrix_cell_recipe(const MatrixCell& cell, const RecipeBook& book) {
  const Recipe* recipe = entry_recipe(cell.recipe, book);
  if (!recipe) fail_bad_input("matrix cell " + cell.name() + ": unknown recipe '" + cell.recipe + "'");
  return *recipe;
}

BuildMatrix load_build_matrix(const std::filesystem::path& file, const RecipeBook& book) {
  toml::table root;
  try {
    root = parse_toml_file(file);  // bounded, a regular file only: a FIFO or /dev/zero is refused, never read
  } catch (const toml::parse_error& e) {
    fail_bad_input(file.string() + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description()));
  }
  for (const auto& [key, node] : root) {
    // `runners` (arch set -> CI runner label) is for CI files that read the matrix.
    static const std::set<std::string> known = {"recipes", "arch_sets", "cuda", "jobs", "refs", "runners"};
    if (!known.count(std::string(key.str())))
      bad(file, &node, std::string(key.str()), "unknown key (known: recipes, arch_sets, cuda, jobs, refs, runners)");
  }
  BuildMatrix matrix;
  auto recipes = strings(file, root.get("recipes"), "recipes", true);
  auto arch_sets = strings(file, root.get("arch_sets"), "arch_sets", true);
  auto toolkits = strings(file, root.get("cuda"), "cuda", false);
  if (toolkits.empty()) toolkits = {""};
  // What each cell would refuse, refused for the whole file (a dry run too).
  for (const auto& arch : arch_sets) {
    try {
      parse_arch_spec(arch);
    } catch (const UserError& error) {
      bad(file, root.get("arch_sets"), "arch_sets", error.what());
    }
  }
  const auto toolkit_table = ToolkitTable::load_default();
  for (const auto& cuda : toolkits) {
    if (cuda.empty()) continue;
    const auto version = CudaVersion::parse(cuda);
    const auto* facts = version ? toolkit_table.newest_at_or_below(*version) : nullptr;
    if (!version) bad(file, root.get("cuda"), "cuda", "'" + cuda + "' is not a CUDA version like 13.0");
    if (!facts || facts->version.major != version->major)
      bad(file, root.get("cuda"), "cuda", "CUDA " + cuda + " is no release archbuild knows");
  }
  if (const auto* jobs = root.get("jobs")) {
    auto value = jobs->value<int64_t>();
    if (!value || *value < 1 || *value > 4096) bad(file, jobs, "jobs", "expected a whole number from 1 to 4096");
    matrix.jobs = static_cast<unsigned>(*value);
  }
  const auto* refs = root.get("refs") ? root.get("refs")->as_table() : nullptr;
  if (root.get("refs") && !refs) bad(file, root.get("refs"), "refs", "expected a table of recipe = [refs]");
  if (refs)
    for (const auto& [name, node] : *refs) {
      if (std::find(recipes.begin(), recipes.end(), std::string(name.str())) == recipes.end())
        bad(file, &node, "refs." + std::string(name.str()), "not one of the matrix's recipes");
      if (is_pypi_repository(name.str()))
        bad(file, &node, "refs." + std::string(name.str()), "a pypi: entry's version is in the entry (==VERSION)");
      for (const auto& ref : strings(file, &node, "refs." + std::string(name.str()), true))
        if (!is_valid_git_ref_name(ref))
          bad(file, &node, "refs." + std::string(name.str()),
              "'" + ref + "' is not a valid git ref name (a tag, branch or commit)");
    }

  // Dependencies first: a recipe's cells come after those of what it needs.
  std::vector<std::pair<std::string, const Recipe*>> ordered;  // (entry, the recipe it builds with)
  std::set<std::string> placed;
  std::function<void(const std::string&, std::vector<std::string>&)> place = [&](const std::string& name,
                                                                                 std::vector<std::string>& stack) {
    if (placed.count(name)) return;
    if (std::find(stack.begin(), stack.end(), name) != stack.end())
      fail_bad_input(file.string() + ": recipes depend on each other in a cycle through " + name);
    if (is_pypi_repository(name)) {
      try {
        if (parse_pypi_spec(name).version.empty()) fail_bad_input("'" + name + "' names no version (==VERSION)");
      } catch (const UserError& e) {
        bad(file, root.get("recipes"), "recipes", e.what());
      }
    }
    const Recipe* recipe = entry_recipe(name, book);
    if (!recipe) bad(file, root.get("recipes"), "recipes", "unknown recipe '" + name + "' (see `archbuild recipes`)");
    stack.push_back(name);
    for (const auto& dependency : recipe->depends_on)
      if (std::find(recipes.begin(), recipes.end(), dependency) != recipes.end()) place(dependency, stack);
    stack.pop_back();
    placed.insert(name);
    ordered.emplace_back(name, recipe);
  };
  for (const auto& name : recipes) {
    std::vector<std::string> stack;
    place(name, stack);
  }
  for (const auto& [entry, recipe] : ordered) {
    std::vector<std::string> recipe_refs = {""};
    if (refs && refs->get(entry)) recipe_refs = strings(file, refs->get(entry), "refs." + entry, true);
    for (const auto& ref : recipe_refs)
      for (const auto& arch : arch_sets)
        for (const auto& cuda : toolkits) {
          MatrixCell cell{entry, ref, arch, cuda, {}};
          for (size_t i = 0; i < matrix.cells.size(); ++i) {
            const auto& other = matrix.cells[i];
            bool dependency = std::find(recipe->depends_on.begin(), recipe->depends_on.end(), other.recipe) !=
                              recipe->depends_on.end();
            if (dependency && other.arch == arch && other.cuda == cuda) cell.needs.push_back(i);
          }
          matrix.cells.push_back(cell);
        }
  }
  return matrix;
}

}  // namespace archbuild
