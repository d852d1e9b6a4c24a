#include "recipe/recipe.h"

#include <algorithm>
#include <functional>
#include <map>

#include "config/setting_names.h"
#include "config/settings.h"
#include "core/data_dir.h"
#include "core/error.h"
#include "core/strings.h"
#include "core/system_info.h"
#include "recipe/recipe_parser.h"
#include "recipe/repository_url.h"

namespace archbuild {

Recipe RecipeBook::parse_file(const std::filesystem::path& file, const std::filesystem::path& patches_dir) {
  return parse_recipe_file(file, patches_dir, false);
}

Recipe RecipeBook::for_machine(Recipe recipe, const std::string& machine) {
  auto elsewhere = [&](const auto& entry) { return !entry.machine.empty() && entry.machine != machine; };
  std::erase_if(recipe.env_overlays, elsewhere);
  std::erase_if(recipe.system_libraries, elsewhere);
  return recipe;
}

RecipeBook RecipeBook::load(const std::filesystem::path& recipes_dir, const std::filesystem::path& patches_dir,
                            const std::string& machine) {
  return load_search_path({{recipes_dir, patches_dir, "built-in"}}, machine);
}

RecipeBook RecipeBook::load_search_path(const std::vector<RecipeDir>& dirs, const std::string& machine) {
  const std::string host = machine.empty() ? host_machine() : machine;
  RecipeBook book;
  std::map<std::string, size_t> by_name;
  for (const auto& dir : dirs) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir.recipes, ec)) {
      if (dir.origin == "built-in") fail_environment("recipes not found: " + dir.recipes.string());
      fail_bad_input("recipe dir " + dir.recipes.string() + " (from " + dir.origin + ") is not a directory");
    }
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(dir.recipes, ec))
      if (entry.path().extension() == ".toml") files.push_back(entry.path());
    if (ec)
      fail_bad_input("cannot list the recipe dir " + dir.recipes.string() + " (from " + dir.origin +
                     "): " + ec.message());
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      // A FIFO named x.toml in a site dir would block the parser.
      if (!std::filesystem::is_regular_file(file, ec))
        fail_bad_input("recipe " + file.string() + " (from " + dir.origin + ") is not a regular file");
      std::string name = file.stem().string();
      if (auto it = by_name.find(name); it != by_name.end()) {
        book.recipes_[it->second].shadows.push_back(file);  // an earlier dir's recipe wins
        continue;
      }
      Recipe recipe = for_machine(parse_recipe_file(file, dir.patches, dir.origin != "built-in"), host);
      recipe.origin = dir.origin;
      by_name[name] = book.recipes_.size();
      book.recipes_.push_back(std::move(recipe));
    }
  }
  std::sort(book.recipes_.begin(), book.recipes_.end(),
            [](const Recipe& a, const Recipe& b) { return a.name < b.name; });
  for (const auto& recipe : book.recipes_)
    for (const auto& dependency : recipe.depends_on)
      if (!book.find(dependency))
        fail_bad_input(recipe.file.string() + ": key 'depends_on': unknown recipe '" + dependency + "'");
  // A cycle would make a build wait on itself forever (it builds its
  // dependencies first, under the same work-tree lock): refuse the book.
  std::map<std::string, int> state;  // 0 unseen, 1 on the current path, 2 done
  std::vector<std::string> path;
  std::function<void(const Recipe&)> visit = [&](const Recipe& recipe) {
    state[recipe.name] = 1;
    path.push_back(recipe.name);
    for (const auto& name : recipe.depends_on) {
      if (state[name] == 1) {
        auto start = std::find(path.begin(), path.end(), name);
        std::vector<std::string> cycle(start, path.end());
        cycle.push_back(name);
        fail_bad_input(recipe.file.string() +
                       ": key 'depends_on': recipes depend on each other in a cycle: " + join(cycle, " -> "));
      }
      if (state[name] == 0) visit(*book.find(name));
    }
    path.pop_back();
    state[recipe.name] = 2;
  };
  for (const auto& recipe : book.recipes_)
    if (state[recipe.name] == 0) visit(recipe);
  return book;
}

RecipeBook RecipeBook::load_default() { return load(data_dir() / "recipes", data_dir() / "patches"); }

RecipeBook RecipeBook::load_for(const Settings& settings) {
  std::vector<RecipeDir> dirs;
  const std::string origin = "recipe_path (" + settings.get(setting_name::recipe_path).origin + ")";
  for (const auto& dir : settings.recipe_dirs()) dirs.push_back({dir, dir / "patches", origin});
  dirs.push_back({data_dir() / "recipes", data_dir() / "patches", "built-in"});
  return load_search_path(dirs);
}

const Recipe* RecipeBook::find_by_repository(const std::string& url) const {
  const Recipe* found = nullptr;
  for (const auto& recipe : recipes_)
    if (!recipe.repository.empty() && same_repository(recipe.repository, url)) {
      if (found) return nullptr;  // two recipes for one repository: the user picks with --recipe
      found = &recipe;
    }
  return found;
}

const Recipe* RecipeBook::find_by_pypi_name(const std::string& name) const {
  const std::string wanted = canonical_project_name(name);
  const Recipe* found = nullptr;
  for (const auto& recipe : recipes_) {
    const bool of_project = recipe.pypi_name == wanted ||
                            (is_pypi_repository(recipe.repository) &&
                             canonical_project_name(recipe.repository.substr(kPypiPrefix.size())) == wanted);
    if (!of_project) continue;
    if (found) return nullptr;  // two recipes for one project: the user picks with --recipe
    found = &recipe;
  }
  return found;
}

const Recipe* RecipeBook::find(const std::string& name) const {
  for (const auto& recipe : recipes_)
    if (recipe.name == name) return &recipe;
  return nullptr;
}

ResolvedRecipe RecipeBook::resolve(const Recipe& recipe, const std::string& ref) const {
  ResolvedRecipe resolved;
  resolved.recipe = &recipe;
  resolved.ref = ref.empty() ? recipe.default_ref : ref;
  resolved.version = version_of_ref(resolved.ref);
  for (const auto& step : recipe.builds)
    if (step.versions.contains(resolved.version)) {
      resolved.build = &step;
      break;
    }
  if (!resolved.build) {
    std::vector<std::string> ranges;
    for (const auto& step : recipe.builds) ranges.push_back(step.versions.text().empty() ? "*" : step.versions.text());
    fail_bad_input("recipe " + recipe.name + " has no build for ref '" + resolved.ref +
                   "' (its ranges: " + join(ranges, "; ") + ")");
  }
  for (const auto& rule : recipe.patches)
    if (rule.versions.contains(resolved.version))
      for (const auto& file : rule.files) resolved.patch_files.push_back(recipe.patches_dir / file);
  for (const auto& pin : recipe.pins)
    if (pin.versions.contains(resolved.version)) {
      resolved.pinned = pin.dependencies;  // the first matching row
      break;
    }
  return resolved;
}

}  // namespace archbuild
