#include "recipe/recipe_parser.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "config/toml_file.h"
#include "core/data_dir.h"
#include "core/error.h"
#include "core/path_policy.h"
#include "core/sha256.h"
#include "core/strings.h"
#include "core/system_info.h"
#include "recipe/recipe_kind.h"
#include "recipe/repository_url.h"

namespace archbuild {

namespace {

// Reads a recipe's TOML in the file's order of keys, so that the first bad
// entry is the one reported.
class RecipeParser {
 public:
  RecipeParser(std::filesystem::path file, std::filesystem::path patches_dir, bool site)
      : file_(std::move(file)), patches_dir_(std::move(patches_dir)), site_(site) {}

  Recipe parse() {
    const toml::table root = read_root();
    Recipe recipe;
    recipe.file = file_;
    recipe.patches_dir = patches_dir_;
    recipe.file_sha256 = sha256_file_hex(file_);
    recipe.name = recipe_name(root);
    recipe.description = string(root, "description", false);
    recipe.kind = kind(root);
    recipe.repository = repository(root);
    recipe.pypi_name = pypi_name(root, recipe.repository);
    recipe.default_ref = string(root, "default_ref", !recipe.repository.empty());
    recipe.releases = releases(root);
    recipe.submodules = boolean(root, "submodules");
    recipe.subdirectory = subdirectory(root);
    recipe.keep_project_archs = boolean(root, "keep_project_archs");
    recipe.dialect = dialect(root);
    if (auto gb = job_memory_gb(root)) recipe.job_memory_gb = *gb;
    recipe.depends_on = strings(root, "depends_on");
    recipe.kernel_test = kernel_test(root);
    recipe.verified = verified(root, recipe.kernel_test);
    if (auto* node = root.get("tests")) recipe.tests = project_tests(*node);
    if (auto* node = root.get("estimate")) recipe.estimate = estimate(*node);
    recipe.builds = build_steps(root);
    recipe.env_overlays = env_overlays(root);
    recipe.system_libraries = system_libraries(root);
    recipe.pins = dependency_pins(root, recipe.depends_on);
    recipe.patches = patch_rules(root);
    return recipe;
  }

 private:
  // The file's TOML, holding no top-level key a recipe does not know.
  toml::table read_root() {
    toml::table root;
    try {
      root = parse_toml_file(file_);
    } catch (const toml::parse_error& e) {
      fail_bad_input(file_.string() + ":" + std::to_string(e.source().begin.line) + ": " +
                     std::string(e.description()));
    }
    only_keys(root,
              {"name",           "description",  "kind",          "pypi",       "repository",  "default_ref",
               "submodules",     "arch_dialect", "job_memory_gb", "depends_on", "kernel_test", "keep_project_archs",
               "tests",          "build",        "env",           "pairs",      "patches",     "releases",
               "system_library", "estimate",     "subdirectory",  "verified"});
    return root;
  }

  std::string recipe_name(const toml::table& root) {
    auto name = string(root, "name", true);
    if (name != file_.stem().string())
      bad(root.get("name")->source(), "name", "must match the file name ('" + file_.stem().string() + "')");
    return name;
  }

  std::string kind(const toml::table& root) {
    auto kind = string(root, "kind", false);
    if (kind.empty()) return std::string(kDefaultRecipeKind);
    if (!find_recipe_kind(kind))
      bad(root.get("kind")->source(), "kind", "'" + kind + "' is not a kind (one of: " + recipe_kind_names() + ")");
    return kind;
  }

  std::string repository(const toml::table& root) {
    auto repository = string(root, "repository", false);
    if (is_pypi_repository(repository) && !valid_project_name(repository.substr(kPypiPrefix.size())))
      bad(root.get("repository")->source(), "repository",
          "'" + repository + "': pypi:NAME needs a valid project name (the version is default_ref, or --ref)");
    return repository;
  }

  // `pypi = "flash-attn"`: the PyPI project a git repository's recipe also builds from its sdists.
  std::string pypi_name(const toml::table& root, const std::string& repository) {
    auto name = string(root, "pypi", false);
    if (name.empty()) return name;
    if (!valid_project_name(name))
      bad(root.get("pypi")->source(), "pypi", "'" + name + "' is not a valid PyPI project name");
    if (is_pypi_repository(repository))
      bad(root.get("pypi")->source(), "pypi", "is the repository already ('" + repository + "'): leave it out");
    return canonical_project_name(name);
  }

  std::vector<std::string> releases(const toml::table& root) {
    auto releases = strings(root, "releases");
    for (const auto& release : releases)
      if (!version_of_ref(release))
        bad(root.get("releases")->source(), "releases", "'" + release + "' is not a version");
    return releases;
  }

  std::string subdirectory(const toml::table& root) {
    auto subdirectory = string(root, "subdirectory", false);
    if (auto problem = relative_path_problem(subdirectory); !subdirectory.empty() && !problem.empty())
      bad(root.get("subdirectory")->source(), "subdirectory",
          "'" + subdirectory + "' must be a directory inside the repository (\"python/pkg\"): it " + problem);
    return subdirectory;
  }

  ArchDialect dialect(const toml::table& root) {
    auto dialect = parse_arch_dialect(string(root, "arch_dialect", true));
    if (!dialect) bad(root.get("arch_dialect")->source(), "arch_dialect", "must be \"cmake\" or \"extension\"");
    return *dialect;
  }

  // `verified = "H200 (9.0), ..., 2026-12-05: checked, ..."`: a GPU run proved it, through its kernel test.
  std::string verified(const toml::table& root, const std::string& kernel_test) {
    auto text = string(root, "verified", false);
    if (!root.get("verified")) return text;
    if (trim(text).empty())
      bad(root.get("verified")->source(), "verified", "is empty: say where and when, or leave the key out");
    if (kernel_test.empty())
      bad(root.get("verified")->source(), "verified", "needs a kernel_test: a recipe is proven through it");
    return text;
  }

  // None when the recipe keeps the default.
  std::optional<double> job_memory_gb(const toml::table& root) {
    auto* node = root.get("job_memory_gb");
    if (!node) return std::nullopt;
    auto value = node->value<double>();
    if (!value || !std::isfinite(*value) || *value <= 0)
      bad(node->source(), "job_memory_gb", "must be a positive number of GB");
    return *value;
  }

  std::string kernel_test(const toml::table& root) {
    auto kernel_test = string(root, "kernel_test", false);
    if (kernel_test.empty()) return kernel_test;
    // Relative to the recipe's dir or the data dir, and inside it: never an absolute path or '..'.
    if (const auto problem = relative_path_problem(kernel_test); !problem.empty())
      bad(root.get("kernel_test")->source(), "kernel_test", "'" + kernel_test + "' " + problem);
    std::vector<std::filesystem::path> roots = {file_.parent_path().parent_path()};
    if (site_) roots = {file_.parent_path(), data_dir()};
    auto found = std::find_if(roots.begin(), roots.end(),
                              [&](const auto& dir) { return std::filesystem::exists(dir / kernel_test); });
    if (found == roots.end())
      bad(root.get("kernel_test")->source(), "kernel_test", "file '" + kernel_test + "' does not exist");
    if (site_) return std::filesystem::absolute(*found / kernel_test).lexically_normal().string();
    return kernel_test;
  }

  std::vector<BuildStep> build_steps(const toml::table& root) {
    auto* builds = root.get_as<toml::array>("build");
    if (!builds || builds->empty()) bad(root.source(), "build", "needs at least one [[build]] table");
    std::vector<BuildStep> steps;
    for (auto& element : *builds) {
      auto* table = element.as_table();
      if (!table) bad(element.source(), "build", "must be an array of tables ([[build]])");
      steps.push_back(build_step(*table));
    }
    return steps;
  }

  BuildStep build_step(const toml::table& table) {
    only_keys(table, {"versions", "system", "command", "env", "fresh_configure_removes", "requires", "requires_from"},
              "build.");
    BuildStep step;
    step.versions = range(table, "build.versions");
    step.system = string(table, "system", true, "build.");
    if (step.system != "setup.py" && step.system != "pyproject")
      bad(table.get("system")->source(), "build.system", "must be \"setup.py\" or \"pyproject\"");
    step.command = strings(table, "command", "build.");
    if (step.command.empty()) bad(table.source(), "build.command", "must be a non-empty array of strings");
    for (const auto& argument : step.command) check_placeholders(*table.get("command"), argument);
    step.env = string_table(table, "env", "build.env");
    step.fresh_configure_removes = strings(table, "fresh_configure_removes", "build.");
    for (const auto& path : step.fresh_configure_removes)
      if (auto problem = relative_path_problem(path); !problem.empty())  // never the tree itself (".") or its .git
        bad(table.get("fresh_configure_removes")->source(), "build.fresh_configure_removes",
            "'" + path + "' must be a dir inside the work tree (not the tree itself or its .git): it " + problem);
    step.requires_list = strings(table, "requires", "build.");
    for (const auto& requirement : step.requires_list)
      if (requirement.empty() || requirement.find_first_of("\n\r") != std::string::npos || requirement.front() == '-')
        bad(table.get("requires")->source(), "build.requires",
            "'" + requirement + "' is not a requirement (PEP 508, like \"cmake>=3.27\")");
    step.requires_from = strings(table, "requires_from", "build.");
    for (const auto& path : step.requires_from)
      if (auto problem = relative_path_problem(path); !problem.empty())
        bad(table.get("requires_from")->source(), "build.requires_from",
            "'" + path + "' must be a file inside the work tree: it " + problem);
    return step;
  }

  std::vector<EnvOverlay> env_overlays(const toml::table& root) {
    std::vector<EnvOverlay> overlays;
    for (auto* table : tables(root, "env")) {
      only_keys(*table, {"versions", "cuda", "set", "machine"}, "env.");
      EnvOverlay overlay{range(*table, "env.versions"), range(*table, "env.cuda"),
                         string_table(*table, "set", "env.set"), machine(*table, "env.")};
      if (overlay.set.empty()) bad(table->source(), "env.set", "must be a non-empty table of strings");
      overlays.push_back(std::move(overlay));
    }
    return overlays;
  }

  std::vector<SystemLibrary> system_libraries(const toml::table& root) {
    std::vector<SystemLibrary> libraries;
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
      check_system_library(*table, library);
      libraries.push_back(std::move(library));
    }
    return libraries;
  }

  void check_system_library(const toml::table& table, const SystemLibrary& library) {
    if (library.wheel.empty() != library.wheel_dir.empty())
      bad(table.source(), "system_library",
          "wheel and wheel_dir go together (the distribution, and its dir "
          "with include/ and lib/ in site-packages)");
    if (!library.wheel_dir.empty())
      if (auto problem = relative_path_problem(library.wheel_dir); !problem.empty())
        bad(table.get("wheel_dir")->source(), "system_library.wheel_dir",
            "'" + library.wheel_dir + "' must be a dir inside site-packages (\"nvidia/nccl\"): it " + problem);
    if (library.name.empty() || library.name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                               "0123456789_-") != std::string::npos)
      bad(table.get("name") ? table.get("name")->source() : table.source(), "system_library.name",
          "'" + library.name + "' must be letters, digits, '-' and '_' (it names a dir archbuild makes)");
    for (const auto* file : {&library.header, &library.library})
      if (file->empty() || file->find('/') != std::string::npos || *file == "..")
        bad(table.source(), "system_library", "'" + *file + "' must be a plain file name");
  }

  std::vector<DependencyPin> dependency_pins(const toml::table& root, const std::vector<std::string>& depends_on) {
    std::vector<DependencyPin> pins;
    for (auto* table : tables(root, "pairs")) {
      DependencyPin pin{range(*table, "pairs.versions"), {}};
      for (auto& [key, value] : *table) {
        const std::string name(key.str());
        if (name == "versions") continue;
        if (std::find(depends_on.begin(), depends_on.end(), name) == depends_on.end())
          bad(value.source(), "pairs." + name, "names no recipe in depends_on");
        auto text = value.value<std::string>();
        if (!text || text->empty() || text->find_first_not_of("0123456789.") != std::string::npos ||
            !version_of_ref(*text))
          bad(value.source(), "pairs." + name, "must be a version of digits and dots (\"2.9.1\")");
        pin.dependencies[name] = *text;
      }
      if (pin.dependencies.empty()) bad(table->source(), "pairs", "names no dependency version");
      pins.push_back(std::move(pin));
    }
    return pins;
  }

  // Each [[patches]] table is checked in full before the next is looked at.
  std::vector<PatchRule> patch_rules(const toml::table& root) {
    std::vector<PatchRule> rules;
    if (auto* patches = root.get_as<toml::array>("patches")) {
      for (auto& element : *patches) {
        auto* table = element.as_table();
        if (!table) bad(element.source(), "patches", "must be an array of tables ([[patches]])");
        rules.push_back(patch_rule(*table));
      }
    } else if (root.get("patches")) {
      bad(root.get("patches")->source(), "patches", "must be an array of tables ([[patches]])");
    }
    return rules;
  }

  PatchRule patch_rule(const toml::table& table) {
    only_keys(table, {"versions", "files"}, "patches.");
    PatchRule rule{range(table, "patches.versions"), strings(table, "files", "patches.")};
    for (const auto& name : rule.files) {
      if (const auto problem = relative_path_problem(name); !problem.empty())
        bad(table.get("files")->source(), "patches.files", "'" + name + "' " + problem);
      if (!std::filesystem::is_regular_file(patches_dir_ / name))
        bad(table.get("files")->source(), "patches.files",
            "patch '" + name + "' not found in " + patches_dir_.string());
    }
    return rule;
  }

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

Recipe parse_recipe_file(const std::filesystem::path& file, const std::filesystem::path& patches_dir,
                         bool site_recipe) {
  return RecipeParser(file, patches_dir, site_recipe).parse();
}

}  // namespace archbuild
