#include "recipe/recipe.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include <toml++/toml.h>

#include "config/setting_names.h"
#include "config/settings.h"
#include "config/toml_file.h"
#include "core/data_dir.h"
#include "core/error.h"
#include "core/path_policy.h"
#include "core/sha256.h"
#include "core/strings.h"
#include "core/system_info.h"
#include "recipe/repository_url.h"

namespace archbuild {

namespace {

class RecipeParser {
 public:
  // A site recipe (`site`, from the recipe_path setting) finds its
  // kernel_test beside it first, then in the data dir.
  RecipeParser(std::filesystem::path file, std::filesystem::path patches_dir, bool site = false)
      : file_(std::move(file)), patches_dir_(std::move(patches_dir)), site_(site) {}

  Recipe parse() {
    toml::table root;
    try {
      root = parse_toml_file(file_);
    } catch (const toml::parse_error& e) {
      fail_bad_input(file_.string() + ":" + std::to_string(e.source().begin.line) + ": " +
                     std::string(e.description()));
    }
    only_keys(root, {"name", "description", "repository", "default_ref", "submodules", "arch_dialect", "job_memory_gb",
                     "depends_on", "kernel_test", "keep_project_archs", "tests", "build", "env", "pairs", "patches",
                     "releases", "system_library", "estimate", "subdirectory"});
    Recipe recipe;
    recipe.file = file_;
    recipe.patches_dir = patches_dir_;
    recipe.file_sha256 = sha256_file_hex(file_);
    recipe.name = string(root, "name", true);
    if (recipe.name != file_.stem().string())
      bad(root.get("name")->source(), "name", "must match the file name ('" + file_.stem().string() + "')");
    recipe.description = string(root, "description", false);
    recipe.repository = string(root, "repository", false);
    if (is_pypi_repository(recipe.repository) && !valid_project_name(recipe.repository.substr(kPypiPrefix.size())))
      bad(root.get("repository")->source(), "repository",
          "'" + recipe.repository + "': pypi:NAME needs a valid project name (the version is default_ref, or --ref)");
    recipe.default_ref = string(root, "default_ref", !recipe.repository.empty());
    recipe.releases = strings(root, "releases");
    for (const auto& release : recipe.releases)
      if (!version_of_ref(release))
        bad(root.get("releases")->source(), "releases", "'" + release + "' is not a version");
    recipe.submodules = boolean(root, "submodules");
    recipe.subdirectory = string(root, "subdirectory", false);
    if (auto problem = relative_path_problem(recipe.subdirectory); !recipe.subdirectory.empty() && !problem.empty())
      bad(root.get("subdirectory")->source(), "subdirectory",
          "'" + recipe.subdirectory + "' must be a directory inside the repository (\"python/pkg\"): it " + problem);
    recipe.keep_project_archs = boolean(root, "keep_project_archs");
    auto dialect_text = string(root, "arch_dialect", true);
    auto dialect = parse_arch_dialect(dialect_text);
    if (!dialect) bad(root.get("arch_dialect")->source(), "arch_dialect", "must be \"cmake\" or \"extension\"");
    recipe.dialect = *dialect;
    if (auto node = root.get("job_memory_gb")) {
      auto value = node->value<double>();
      if (!value || !std::isfinite(*value) || *value <= 0)
        bad(node->source(), "job_memory_gb", "must be a positive number of GB");
      recipe.job_memory_gb = *value;
    }
    recipe.depends_on = strings(root, "depends_on");
    recipe.kernel_test = string(root, "kernel_test", false);
    if (!recipe.kernel_test.empty()) {
      // Relative to the recipe's dir or the data dir, and inside it: never an absolute path or '..'.
      if (const auto problem = relative_path_problem(recipe.kernel_test); !problem.empty())
        bad(root.get("kernel_test")->source(), "kernel_test", "'" + recipe.kernel_test + "' " + problem);
      std::vector<std::filesystem::path> roots = {file_.parent_path().parent_path()};
      if (site_) roots = {file_.parent_path(), data_dir()};
      auto found = std::find_if(roots.begin(), roots.end(),
                                [&](const auto& dir) { return std::filesystem::exists(dir / recipe.kernel_test); });
      if (found == roots.end())
        bad(root.get("kernel_test")->source(), "kernel_test", "file '" + recipe.kernel_test + "' does not exist");
      if (site_)
        recipe.kernel_test = std::filesystem::absolute(*found / recipe.kernel_test).lexically_normal().string();
    }
    if (auto* node = root.get("tests")) recipe.tests = project_tests(*node);
    if (auto* node = root.get("estimate")) recipe.estimate = estimate(*node);

    auto* builds = root.get_as<toml::array>("build");
    if (!builds || builds->empty()) bad(root.source(), "build", "needs at least one [[build]] table");
    for (auto& element : *builds) {
      auto* table = element.as_table();
      if (!table) bad(element.source(), "build", "must be an array of tables ([[build]])");
      only_keys(*table,
                {"versions", "system", "command", "env", "fresh_configure_removes", "requires", "requires_from"},
                "build.");
      BuildStep step;
      step.versions = range(*table, "build.versions");
      step.system = string(*table, "system", true, "build.");
      if (step.system != "setup.py" && step.system != "pyproject")
        bad(table->get("system")->source(), "build.system", "must be \"setup.py\" or \"pyproject\"");
      step.command = strings(*table, "command", "build.");
      if (step.command.empty()) bad(table->source(), "build.command", "must be a non-empty array of strings");
      for (const auto& argument : step.command) check_placeholders(*table->get("command"), argument);
      step.env = string_table(*table, "env", "build.env");
      step.fresh_configure_removes = strings(*table, "fresh_configure_removes", "build.");
      for (const auto& path : step.fresh_configure_removes)
        if (auto problem = relative_path_problem(path); !problem.empty())  // never the tree itself (".") or its .git
          bad(table->get("fresh_configure_removes")->source(), "build.fresh_configure_removes",
              "'" + path + "' must be a dir inside the work tree (not the tree itself or its .git): it " + problem);
      step.requires_list = strings(*table, "requires", "build.");
      for (const auto& requirement : step.requires_list)
        if (requirement.empty() || requirement.find_first_of("\n\r") != std::string::npos || requirement.front() == '-')
          bad(table->get("requires")->source(), "build.requires",
              "'" + requirement + "' is not a requirement (PEP 508, like \"cmake>=3.27\")");
      step.requires_from = strings(*table, "requires_from", "build.");
      for (const auto& path : step.requires_from)
        if (auto problem = relative_path_problem(path); !problem.empty())
          bad(table->get("requires_from")->source(), "build.requires_from",
              "'" + path + "' must be a file inside the work tree: it " + problem);
      recipe.builds.push_back(std::move(step));
    }
    for (auto* table : tables(root, "env")) {
      only_keys(*table, {"versions", "cuda", "set", "machine"}, "env.");
      EnvOverlay overlay{range(*table, "env.versions"), range(*table, "env.cuda"),
                         string_table(*table, "set", "env.set"), machine(*table, "env.")};
      if (overlay.set.empty()) bad(table->source(), "env.set", "must be a non-empty table of strings");
      recipe.env_overlays.push_back(std::move(overlay));
    }
    for (auto* table : tables(root, "system_library")) {
      only_keys(*table,
                {"name", "header", "library", "found_env", "missing", "wheel", "wheel_dir", "wheel_env", "machine"},
                "system_library.");
      SystemLibrary library{string(*table, "name", true, "system_library."),
                            string(*table, "header", true, "system_library."),
                            string(*table, "library", true, "system_library."),
                            string_table(*table, "found_env", "system_library.found_env"),
                            string(*table, "missing", false, "system_library."),
                            string(*table, "wheel", false, "system_library."),
                            string(*table, "wheel_dir", false, "system_library."),
                            string_table(*table, "wheel_env", "system_library.wheel_env"),
                            machine(*table, "system_library.")};
      if (library.wheel.empty() != library.wheel_dir.empty())
        bad(table->source(), "system_library",
            "wheel and wheel_dir go together (the distribution, and its dir "
            "with include/ and lib/ in site-packages)");
      if (!library.wheel_dir.empty())
        if (auto problem = relative_path_problem(library.wheel_dir); !problem.empty())
          bad(table->get("wheel_dir")->source(), "system_library.wheel_dir",
              "'" + library.wheel_dir + "' must be a dir inside site-packages (\"nvidia/nccl\"): it " + problem);
      if (library.name.empty() || library.name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                                 "0123456789_-") != std::string::npos)
        bad(table->get("name") ? table->get("name")->source() : table->source(), "system_library.name",
            "'" + library.name + "' must be letters, digits, '-' and '_' (it names a dir archbuild makes)");
      for (const auto* file : {&library.header, &library.library})
        if (file->empty() || file->find('/') != std::string::npos || *file == "..")
          bad(table->source(), "system_library", "'" + *file + "' must be a plain file name");
      recipe.system_libraries.push_back(std::move(library));
    }
    for (auto* table : tables(root, "pairs")) {
      DependencyPin pin{range(*table, "pairs.versions"), {}};
      for (auto& [key, value] : *table) {
        const std::string name(key.str());
        if (name == "versions") continue;
        if (std::find(recipe.depends_on.begin(), recipe.depends_on.end(), name) == recipe.depends_on.end())
          bad(value.source(), "pairs." + name, "names no recipe in depends_on");
        auto text = value.value<std::string>();
        if (!text || text->empty() || text->find_first_not_of("0123456789.") != std::string::npos ||
            !version_of_ref(*text))
          bad(value.source(), "pairs." + name, "must be a version of digits and dots (\"2.9.1\")");
        pin.dependencies[name] = *text;
      }
      if (pin.dependencies.empty()) bad(table->source(), "pairs", "names no dependency version");
      recipe.pins.push_back(std::move(pin));
    }
    if (auto* patches = root.get_as<toml::array>("patches")) {
      for (auto& element : *patches) {
        auto* table = element.as_table();
        if (!table) bad(element.source(), "patches", "must be an array of tables ([[patches]])");
        only_keys(*table, {"versions", "files"}, "patches.");
        PatchRule rule{range(*table, "patches.versions"), strings(*table, "files", "patches.")};
        for (const auto& name : rule.files) {
          if (const auto problem = relative_path_problem(name); !problem.empty())
            bad(table->get("files")->source(), "patches.files", "'" + name + "' " + problem);
          if (!std::filesystem::is_regular_file(patches_dir_ / name))
            bad(table->get("files")->source(), "patches.files",
                "patch '" + name + "' not found in " + patches_dir_.string());
        }
        recipe.patches.push_back(std::move(rule));
      }
    } else if (root.get("patches")) {
      bad(root.get("patches")->source(), "patches", "must be an array of tables ([[patches]])");
    }
    return recipe;
  }

 private:
  [[noreturn]] void bad(const toml::source_region& where, const std::string& key, const std::string& why) {
    fail_bad_input(file_.string() + ":" + std::to_string(where.begin.line) + ": key '" + key + "': " + why);
  }

  void only_keys(const toml::table& table, std::set<std::string> allowed, const std::string& prefix = "") {
    for (auto& [key, value] : table)
      if (!allowed.count(std::string(key.str()))) bad(value.source(), prefix + std::string(key.str()), "unknown key");
  }

  std::string string(const toml::table& table, const std::string& key, bool required, const std::string& prefix = "") {
    auto node = table.get(key);
    if (!node) {
      if (required) bad(table.source(), prefix + key, "missing");
      return {};
    }
    auto value = node->value<std::string>();
    if (!value) bad(node->source(), prefix + key, "must be a string");
    return *value;
  }

  // `machine = "aarch64"`: the host CPUs archbuild builds on.
  std::string machine(const toml::table& table, const std::string& prefix) {
    auto value = string(table, "machine", false, prefix);
    if (table.get("machine") && !is_known_machine(value))
      bad(table.get("machine")->source(), prefix + "machine",
          "'" + value + "' is not a host CPU archbuild builds on (x86_64 or aarch64)");
    return value;
  }

  bool boolean(const toml::table& table, const std::string& key) {
    auto node = table.get(key);
    if (!node) return false;
    auto value = node->value<bool>();
    if (!value) bad(node->source(), key, "must be true or false");
    return *value;
  }

  std::vector<std::string> strings(const toml::table& table, const std::string& key, const std::string& prefix = "") {
    std::vector<std::string> out;
    auto node = table.get(key);
    if (!node) return out;
    auto* array = node->as_array();
    if (!array) bad(node->source(), prefix + key, "must be an array of strings");
    for (auto& element : *array) {
      auto text = element.value<std::string>();
      if (!text) bad(element.source(), prefix + key, "must be an array of strings");
      out.push_back(*text);
    }
    return out;
  }

  // key = { NAME = "value", ... }: strings only.
  std::map<std::string, std::string> string_table(const toml::table& table, const std::string& key,
                                                  const std::string& full_key) {
    std::map<std::string, std::string> out;
    auto* node = table.get(key);
    if (!node) return out;
    auto* values = node->as_table();
    if (!values) bad(node->source(), full_key, "must be a table of strings");
    for (auto& [name, value] : *values) {
      auto text = value.value<std::string>();
      if (!text) bad(value.source(), full_key + "." + std::string(name.str()), "must be a string");
      out[std::string(name.str())] = *text;
    }
    return out;
  }

  // [[key]]: the tables of an array of tables (none when absent).
  std::vector<const toml::table*> tables(const toml::table& root, const std::string& key) {
    std::vector<const toml::table*> out;
    auto* node = root.get(key);
    if (!node) return out;
    auto* array = node->as_array();
    if (!array) bad(node->source(), key, "must be an array of tables ([[" + key + "]])");
    for (auto& element : *array) {
      auto* table = element.as_table();
      if (!table) bad(element.source(), key, "must be an array of tables ([[" + key + "]])");
      out.push_back(table);
    }
    return out;
  }

  RecipeEstimate estimate(const toml::node& node) {
    auto* table = node.as_table();
    if (!table) bad(node.source(), "estimate", "must be a table ([estimate])");
    only_keys(*table, {"core_hours", "core_hours_per_image", "disk_gb"}, "estimate.");
    RecipeEstimate out;
    for (auto [key, field] :
         {std::pair{"core_hours", &out.core_hours}, std::pair{"core_hours_per_image", &out.core_hours_per_image},
          std::pair{"disk_gb", &out.disk_gb}})
      if (auto* value_node = table->get(key)) {
        auto value = value_node->value<double>();
        if (!value || !std::isfinite(*value) || *value < 0 || *value > 1e6)
          bad(value_node->source(), std::string("estimate.") + key, "must be a number from 0 to 1000000");
        *field = *value;
      }
    return out;
  }

  ProjectTests project_tests(const toml::node& node) {
    auto* table = node.as_table();
    if (!table) bad(node.source(), "tests", "must be a table ([tests])");
    only_keys(*table, {"command", "timeout_s", "max_failed_tests", "requires", "verified", "deselect"}, "tests.");
    ProjectTests tests;
    tests.command = strings(*table, "command", "tests.");
    if (tests.command.empty()) bad(table->source(), "tests.command", "must be a non-empty array of strings");
    if (auto* timeout = table->get("timeout_s")) {
      auto value = timeout->value<double>();
      if (!value || !std::isfinite(*value) || *value <= 0)
        bad(timeout->source(), "tests.timeout_s", "must be a positive number of seconds");
      tests.timeout_seconds = *value;
    }
    if (auto* budget = table->get("max_failed_tests")) {
      auto value = budget->value<int64_t>();
      if (!value || *value < 0 || *value > 100000)
        bad(budget->source(), "tests.max_failed_tests", "must be a whole number from 0 to 100000");
      tests.max_failed_tests = static_cast<unsigned>(*value);
    }
    tests.required_modules = strings(*table, "requires", "tests.");
    tests.verified = string(*table, "verified", false, "tests.");
    if (auto* node = table->get("deselect")) {
      auto* array = node->as_array();
      if (!array) bad(node->source(), "tests.deselect", "must be an array of { test = \"ID\", reason = \"...\" }");
      for (auto& element : *array) {
        auto* entry = element.as_table();
        if (!entry) bad(element.source(), "tests.deselect", "each entry must be { test = \"ID\", reason = \"...\" }");
        only_keys(*entry, {"test", "reason"}, "tests.deselect.");
        DeselectedTest deselected{string(*entry, "test", true, "tests.deselect."),
                                  string(*entry, "reason", true, "tests.deselect.")};
        if (deselected.test.empty() || deselected.reason.empty())
          bad(entry->source(), "tests.deselect", "needs a test id and the reason it is left out");
        tests.deselected.push_back(std::move(deselected));
      }
    }
    return tests;
  }

  VersionRange range(const toml::table& table, const std::string& key) {
    auto short_key = key.substr(key.find('.') + 1);
    auto text = string(table, short_key, false, key.substr(0, key.find('.') + 1));
    try {
      return VersionRange::parse(text);
    } catch (const std::invalid_argument& e) {
      bad(table.get(short_key)->source(), key, e.what());
    }
  }

  void check_placeholders(const toml::node& node, const std::string& argument) {
    static const std::set<std::string> known = {"source_dir", "wheel_dir", "python", "archbuild_data"};
    for (size_t open = argument.find('{'); open != std::string::npos; open = argument.find('{', open + 1)) {
      auto close = argument.find('}', open);
      if (close == std::string::npos || !known.count(argument.substr(open + 1, close - open - 1)))
        bad(node.source(), "build.command",
            "unknown placeholder in '" + argument + "' (known: {source_dir}, {wheel_dir}, {python}, {archbuild_data})");
    }
  }

  std::filesystem::path file_;
  std::filesystem::path patches_dir_;
  bool site_ = false;
};

}  // namespace

Recipe RecipeBook::parse_file(const std::filesystem::path& file, const std::filesystem::path& patches_dir) {
  return RecipeParser(file, patches_dir).parse();
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
      Recipe recipe = for_machine(RecipeParser(file, dir.patches, dir.origin != "built-in").parse(), host);
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
