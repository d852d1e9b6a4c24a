#include <cstdlib>
#include <iostream>

#include "cache/simple_index.h"
#include "cli/command.h"
#include "cli/common_options.h"
#include "cli/json_output.h"
#include "config/setting_names.h"
#include "config/settings.h"
#include "core/error.h"
#include "core/private_dir.h"
#include "process/run_process.h"
#include "ui/terminal.h"
#include "validate/device_validation.h"
#include "validate/validation_output.h"
#include "validate/wheel_validation.h"
#include "wheel/wheel_archive.h"

namespace archbuild {

namespace {
// The recipe whose kernel test fits the wheel: named, the wheel's own
// project, or the generic extension test for anything else.
const Recipe* kernel_test_recipe(const RecipeBook& book, const std::string& named, const std::filesystem::path& wheel) {
  if (!named.empty()) {
    auto* recipe = book.find(named);
    if (!recipe) fail_bad_input("--recipe " + named + ": no such recipe (see `archbuild recipes`)");
    return recipe;
  }
  if (auto name = WheelName::parse(wheel.filename().string()))
    for (const auto& recipe : book.all())
      if (normalize_project_name(recipe.name) == normalize_project_name(name->name)) return &recipe;
  return book.find("cpp-extension");
}
}  // namespace

Command validate_command() {
  return {"validate", "Prove a wheel serves its archs: RECORD, SASS/PTX, and on a GPU module loads and kernel tests",
          [](CLI::App& app) {
            struct Options {
              std::string wheel, arch, cuda, recipe, python, work_dir, source;
              TestOptions tests;
              bool json = false, require_kernel_launch = false, portable = false;
            };
            auto options = std::make_shared<Options>();
            app.add_option("wheel", options->wheel, "The wheel")->required();
            app.add_option("--arch", options->arch, "Targets the wheel must serve (default: the visible GPUs)");
            app.add_option("--cuda", options->cuda, "CUDA version the arch spec resolves against");
            app.add_option("--recipe", options->recipe, "Recipe whose kernel test runs (default: by the wheel's name)");
            add_python_option(app, options->python, "Interpreter for the test venv");
            app.add_option("--work-dir", options->work_dir, "Where the venv and logs go (default: a temp dir)");
            add_test_options(app, options->tests);
            app.add_option("--source", options->source,
                           "The project's source tree the tests run from (needed for --test or a recipe's [tests])");
            add_require_kernel_launch_flag(app, options->require_kernel_launch);
            app.add_flag("--portable", options->portable,
                         "Judge it as a wheel for every node: the audit must run, and the wheel is tried in the "
                         "clean room, where only the interpreter, its dependency wheels and the manylinux "
                         "policy's libraries are (the portable setting; `build --portable` repairs)");
            add_json_flag(app, options->json);
            return [options]() {
              std::error_code ec;
              if (!std::filesystem::is_regular_file(options->wheel, ec))
                fail_bad_input("no such wheel: " + options->wheel);
              // What the user gave is checked before the machine is asked
              // (a GPU-less host's "native" is exit 3; a bad wheel is exit 2).
              if (find_dist_info(open_wheel_for_reading(options->wheel).get()).empty())
                fail_bad_input(options->wheel + " has no *.dist-info/RECORD: not a wheel");
              auto settings = Settings::load(
                  {{setting_name::python, options->python},
                   {setting_name::require_kernel_launch, options->require_kernel_launch ? "true" : ""},
                   {setting_name::portable, options->portable ? "true" : ""},
                   {setting_name::test_wheelhouse, options->tests.wheelhouse}});
              auto book = RecipeBook::load_for(settings);  // site recipes (recipe_path) too
              const auto python = settings.python();
              // The venv and logs go to a subdirectory archbuild makes its own: DIR/<wheel>/, or
              // <wheel>/ in a fresh temporary dir, never DIR itself.
              auto subdir = std::filesystem::path(options->wheel).stem();
              if (subdir.empty() || subdir == "." || subdir == "..") subdir = "wheel";
              std::filesystem::path temporary;
              std::filesystem::path work;
              if (options->work_dir.empty()) {
                temporary = make_private_dir(std::filesystem::temp_directory_path(), "archbuild-validate");
                work = temporary / subdir;
              } else {
                auto parent = std::filesystem::absolute(options->work_dir);
                if (std::filesystem::exists(parent, ec) && !std::filesystem::is_directory(parent, ec))
                  fail_bad_input("--work-dir " + parent.string() + " is not a directory");
                work = parent / subdir;
                check_validation_work_dir(work);
              }
              auto context = HostContext::gather(options->cuda);
              auto targets = context.resolve(options->arch.empty() ? "native" : options->arch).list;
              const auto* recipe = kernel_test_recipe(book, options->recipe, options->wheel);
              WheelValidationRequest request{
                  std::filesystem::absolute(options->wheel), targets, recipe, python.string(), context.gpus, work};
              request.require_kernel_launch = settings.require_kernel_launch();
              request.portable = settings.portable();
              request.test_dependencies = {settings.test_wheelhouses(), false};
              request.audit_tool = ensure_audit_tool(python.string(), settings.cache_dir() / "tools",
                                                     settings.offline());
              if (!options->source.empty()) {
                if (!std::filesystem::is_directory(options->source, ec))
                  fail_bad_input("--source " + options->source + " is not a directory");
                request.source_dir = std::filesystem::absolute(options->source);
                const bool named = !options->tests.command.empty() || (recipe && recipe->tests);
                request.tests = choose_project_tests(recipe, options->tests.command,
                                                     named ? options->tests.timeout() : std::nullopt,
                                                     named ? options->tests.budget() : std::nullopt,
                                                     request.tests_origin);
                if (!request.tests) {
                  // The tree's own suite, report-only unless --max-failed-tests sets a budget.
                  request.tests = find_project_tests(request.source_dir, request.tests_origin);
                  if (request.tests && options->tests.timeout())
                    request.tests->timeout_seconds = *options->tests.timeout();
                  if (request.tests && options->tests.budget()) {
                    request.tests->max_failed_tests = *options->tests.budget();
                    request.tests->report_only = false;
                  }
                  if (!request.tests && (options->tests.timeout() || options->tests.budget()))
                    fail_bad_input(std::string(options->tests.timeout() ? "--test-timeout" : "--max-failed-tests") +
                                   " needs tests to run: --test 'COMMAND', a recipe with [tests], or a tests/ or "
                                   "test/ dir of pytest files in --source");
                }
              } else if (!options->tests.command.empty()) {
                fail_bad_input("--test needs --source DIR: the tests run from the project's source tree");
              }
              auto result = validate_wheel(request);
              // The temporary dir is kept only for the logs of a failed device check.
              if (!temporary.empty() && (result.ok() || !result.device.ran)) std::filesystem::remove_all(temporary, ec);
              if (options->json) {
                auto out = result.to_json();
                out["wheel"] = options->wheel;
                out["targets"] = targets.canonical();
                print_json(out);
              } else {
                std::cout << "wheel    " << options->wheel << "\ntargets  " << targets.canonical() << "\n";
                print_validation(
                    result, [](const std::string& text) { std::cout << text << "\n"; }, stdout);
                std::cout << (result.ok() ? paint("valid", Style::green) : paint("INVALID", Style::red)) << " ("
                          << result.scope() << ")\n";
              }
              if (result.ok()) return ExitCode::success;
              return result.failed_by_environment() ? ExitCode::environment : ExitCode::work_failed;
            };
          }};
}

}  // namespace archbuild
