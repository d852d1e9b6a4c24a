#include <cstdio>
#include <iostream>

#include "cli/command.h"
#include "cli/common_options.h"
#include "cli/json_output.h"
#include "config/settings.h"
#include "core/error.h"
#include "core/strings.h"
#include "recipe/recipe.h"
#include "recipe/recipe_kind.h"
#include "ui/terminal.h"
#include "validate/project_tests.h"

namespace archbuild {

namespace {

nlohmann::json recipe_json(const Recipe& recipe) {
  auto builds = nlohmann::json::array();
  for (const auto& step : recipe.builds)
    builds.push_back(
        {{"versions", step.versions.text()}, {"system", step.system}, {"command", step.command}, {"env", step.env}});
  auto patches = nlohmann::json::array();
  for (const auto& rule : recipe.patches)
    patches.push_back({{"versions", rule.versions.text()}, {"files", rule.files}});
  std::vector<std::string> shadows;
  for (const auto& file : recipe.shadows) shadows.push_back(file.string());
  auto env_rows = nlohmann::json::array();
  for (const auto& row : recipe.env_overlays) {
    env_rows.push_back({{"versions", row.versions.text()}, {"cuda", row.cuda.text()}, {"set", row.set}});
    if (!row.machine.empty()) env_rows.back()["machine"] = row.machine;  // this host's: others are left out
  }
  auto pairs = nlohmann::json::array();
  for (const auto& pin : recipe.pins) pairs.push_back({{"versions", pin.versions.text()}, {"with", pin.dependencies}});
  auto libraries = nlohmann::json::array();
  for (const auto& library : recipe.system_libraries)
    libraries.push_back({{"name", library.name},
                         {"header", library.header},
                         {"library", library.library},
                         {"found_env", library.found_env},
                         {"missing", library.missing}});
  for (size_t i = 0; i < libraries.size(); ++i)
    if (!recipe.system_libraries[i].machine.empty()) libraries[i]["machine"] = recipe.system_libraries[i].machine;
  nlohmann::json tests = nullptr;
  if (recipe.tests)
    tests = {{"command", recipe.tests->command},
             {"timeout_s", recipe.tests->timeout_seconds},
             {"max_failed_tests", recipe.tests->max_failed_tests},
             {"requires", recipe.tests->required_modules},
             {"verified", recipe.tests->verified},
             {"deselect", deselected_json(recipe.tests->deselected)}};
  return {{"name", recipe.name},
          {"description", recipe.description},
          {"kind", recipe.kind},
          {"pypi", recipe.pypi_name},
          {"repository", recipe.repository},
          {"default_ref", recipe.default_ref},
          {"submodules", recipe.submodules},
          {"arch_dialect", to_string(recipe.dialect)},
          {"job_memory_gb", recipe.job_memory_gb},
          {"estimate", recipe.estimate ? nlohmann::json{{"core_hours", recipe.estimate->core_hours},
                                                        {"core_hours_per_image", recipe.estimate->core_hours_per_image},
                                                        {"disk_gb", recipe.estimate->disk_gb}}
                                       : nlohmann::json()},
          {"depends_on", recipe.depends_on},
          {"kernel_test", recipe.kernel_test},
          {"verified", recipe.verified},
          {"builds", builds},
          {"env", env_rows},
          {"pairs", pairs},
          {"releases", recipe.releases},
          {"system_libraries", libraries},
          {"tests", tests},
          {"patches", patches},
          {"file", recipe.file.string()},
          {"file_sha256", recipe.file_sha256},
          {"origin", recipe.origin},
          {"patches_dir", recipe.patches_dir.string()},
          {"shadows", shadows}};
}

// ", shadows /usr/share/archbuild/recipes/torch.toml" when a site recipe hides others of its name.
std::string shadow_text(const Recipe& recipe) {
  std::vector<std::string> files;
  for (const auto& file : recipe.shadows) files.push_back(file.string());
  return files.empty() ? "" : ", shadows " + join(files, ", ");
}

// "16 core-hours + 3 per further image, 20 GB disk"
std::string estimate_text(const Recipe& recipe) {
  if (!recipe.estimate) return "- (the first build's time is recorded)";
  char text[160];
  std::snprintf(text, sizeof text, "%g core-hours + %g per further image, %g GB disk", recipe.estimate->core_hours,
                recipe.estimate->core_hours_per_image, recipe.estimate->disk_gb);
  return text;
}

// "verified on H200 (9.0), ..." or "not verified on a GPU yet"; "" for a
// recipe of the user's project (the generic one, the demo).
std::string verified_text(const Recipe& recipe) {
  if (recipe.repository.empty()) return "";
  return recipe.verified.empty() ? "not verified on a GPU yet" : "verified on " + recipe.verified;
}

std::string or_dash(const std::string& text) { return text.empty() ? "-" : text; }

// The catalog by kind: a heading per kind, then its recipes with their
// descriptions lined up.
void print_recipe_list(const RecipeBook& book, const std::string& only_kind) {
  size_t width = 14;  // the longest name, so descriptions line up
  for (const auto& recipe : book.all()) width = std::max(width, recipe.name.size());
  bool first = true;
  for (const auto& kind : recipe_kinds()) {
    if (!only_kind.empty() && kind.name != only_kind) continue;
    std::vector<const Recipe*> members;
    for (const auto& recipe : book.all())
      if (recipe.kind == kind.name) members.push_back(&recipe);
    if (members.empty()) continue;
    std::cout << (first ? "" : "\n") << paint(std::string(kind.title), Style::bold) << " (" << kind.name << ", "
              << members.size() << ")\n";
    first = false;
    for (const Recipe* recipe : members) {
      std::string name = recipe->name;
      name.resize(width, ' ');
      std::cout << "  " << paint(name, Style::bold) << " " << recipe->description << "\n      "
                << (recipe->repository.empty() ? "(PATH or git URL given by you)" : recipe->repository)
                << (recipe->default_ref.empty() ? "" : " @ " + recipe->default_ref) << ", dialect "
                << to_string(recipe->dialect)
                << (recipe->depends_on.empty() ? "" : ", needs " + join(recipe->depends_on, ", ")) << "\n";
      if (const auto verified = verified_text(*recipe); !verified.empty())
        std::cout << "      " << paint(verified, recipe->verified.empty() ? Style::dim : Style::green) << "\n";
      if (recipe->origin != "built-in" || !recipe->shadows.empty())
        std::cout << "      " << recipe->file.string() << " (" << recipe->origin << ")" << shadow_text(*recipe) << "\n";
    }
  }
}

}  // namespace

Command recipes_command() {
  return {"recipes", "List the build recipes by kind, or show one resolved for a ref", [](CLI::App& app) {
            struct Options {
              std::string name, ref, kind;
              SettingFlags settings;
              bool json = false;
            };
            auto options = std::make_shared<Options>();
            app.add_option("name", options->name, "A recipe to show");
            app.add_option("--ref", options->ref, "Resolve for this tag/branch/commit (default: the recipe's)");
            app.add_option("--kind", options->kind, "List only the recipes of this kind (" + recipe_kind_names() + ")")
                ->check([](const std::string& kind) {
                  return find_recipe_kind(kind) ? std::string()
                                                : "'" + kind + "' is not a kind (one of: " + recipe_kind_names() + ")";
                });
            add_recipe_path_option(app, options->settings.recipe_path);
            add_json_flag(app, options->json, "Print JSON");
            return [options]() {
              auto book = RecipeBook::load_for(Settings::load(options->settings.by_key()));
              if (options->name.empty()) {
                if (options->json) {
                  auto list = nlohmann::json::array();
                  for (const auto& recipe : book.all())
                    if (options->kind.empty() || recipe.kind == options->kind) list.push_back(recipe_json(recipe));
                  print_json(list);
                  return ExitCode::success;
                }
                print_recipe_list(book, options->kind);
                return ExitCode::success;
              }
              const Recipe* recipe = book.find(options->name);
              if (!recipe) {
                std::vector<std::string> names;
                for (const auto& r : book.all()) names.push_back(r.name);
                fail_bad_input("no recipe '" + options->name + "' (known: " + join(names, ", ") + ")");
              }
              auto resolved = book.resolve(*recipe, options->ref);
              std::vector<std::string> patch_files;
              for (const auto& file : resolved.patch_files) patch_files.push_back(file.string());
              if (options->json) {
                auto out = recipe_json(*recipe);
                out["resolved"] = {{"ref", resolved.ref},
                                   {"system", resolved.build->system},
                                   {"command", resolved.build->command},
                                   {"env", resolved.build->env},
                                   {"patches", patch_files}};
                print_json(out);
                return ExitCode::success;
              }
              std::cout << paint(recipe->name, Style::bold) << "  " << recipe->description << "\n"
                        << "  file          " << recipe->file.string() << " (" << recipe->origin << ")"
                        << shadow_text(*recipe) << "\n"
                        << "  kind          " << recipe->kind << " (" << find_recipe_kind(recipe->kind)->title << ")\n"
                        << "  repository    " << (recipe->repository.empty() ? "(given by you)" : recipe->repository)
                        << "\n"
                        << (recipe->pypi_name.empty() ? "" : "  pypi          " + recipe->pypi_name + "\n")
                        << "  ref           " << resolved.ref << (options->ref.empty() ? " (default)" : "") << "\n"
                        << "  submodules    " << (recipe->submodules ? "yes" : "no") << "\n"
                        << "  arch dialect  " << to_string(recipe->dialect) << "\n"
                        << "  job memory    " << recipe->job_memory_gb << " GB per compile job\n"
                        << "  estimate      " << estimate_text(*recipe) << "\n"
                        << "  depends on    " << or_dash(join(recipe->depends_on, ", ")) << "\n"
                        << "  kernel test   " << or_dash(recipe->kernel_test) << "\n"
                        << "  status        " << or_dash(verified_text(*recipe)) << "\n"
                        << "  build         " << resolved.build->system << " (versions "
                        << (resolved.build->versions.text().empty() ? "*" : resolved.build->versions.text()) << ")\n"
                        << "    command     " << join(resolved.build->command, " ") << "\n";
              for (const auto& [key, value] : resolved.build->env)
                std::cout << "    env         " << key << "=" << value << "\n";
              for (const auto& row : recipe->env_overlays)
                if (row.versions.contains(resolved.version))
                  for (const auto& [key, value] : row.set)
                    std::cout << "    env         " << key << "=" << value
                              << (row.cuda.text().empty() ? "" : " (CUDA " + row.cuda.text() + ")")
                              << (row.machine.empty() ? "" : " (" + row.machine + " hosts)") << "\n";
              for (const auto& [dependency, version] : resolved.pinned)
                std::cout << "  pairs with    " << dependency << " " << version << "\n";
              for (const auto& library : recipe->system_libraries)
                std::cout << "  library       " << library.name << " (" << library.header << ", " << library.library
                          << ") from this machine\n";
              if (recipe->tests) {
                std::cout << "  tests         " << join(recipe->tests->command, " ") << " (budget "
                          << recipe->tests->max_failed_tests << " failed, " << recipe->tests->timeout_seconds
                          << " s)\n";
                // A budget is trusted once it has been tried on a GPU; until then the suite only reports.
                std::cout << "  tests status  "
                          << (recipe->tests->verified.empty() ? std::string("not yet run on a GPU: report-only")
                                                              : "verified on " + recipe->tests->verified)
                          << "\n";
                for (const auto& test : recipe->tests->deselected)
                  std::cout << "  deselected    " << test.test << ": " << test.reason << "\n";
              }
              std::cout << "  patches       "
                        << (patch_files.empty() ? "none for this ref" : join(patch_files, "\n                "))
                        << "\n";
              return ExitCode::success;
            };
          }};
}

}  // namespace archbuild
