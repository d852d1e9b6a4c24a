#include <iostream>
#include <map>
#include <mutex>

#include "cli/command.h"
#include "cli/common_options.h"
#include "cli/json_output.h"
#include "config/settings.h"
#include "core/cache_layout.h"
#include "core/error.h"
#include "core/system_info.h"
#include "core/user_path.h"
#include "pipeline/build_context.h"
#include "source/pypi_sdist.h"
#include "source/source_target.h"
#include "source/source_tree.h"
#include "ui/status_line.h"
#include "ui/terminal.h"

namespace archbuild {

namespace {

// "fetch pytorch: 120341/980312 objects, 210.4 MiB, 38.2 MiB/s"
ProgressSink fetch_progress(StatusLine& status) {
  auto starts = std::make_shared<std::map<std::string, std::chrono::steady_clock::time_point>>();
  auto mutex = std::make_shared<std::mutex>();
  return [&status, starts, mutex](const FetchProgress& progress) {
    std::chrono::steady_clock::time_point start;
    {
      std::lock_guard lock(*mutex);
      start = starts->try_emplace(progress.name, std::chrono::steady_clock::now()).first->second;
    }
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    uint64_t rate = seconds > 0.1 ? static_cast<uint64_t>(progress.received_bytes / seconds) : 0;
    status.update("fetch " + progress.name + ": " + std::to_string(progress.received_objects) + "/" +
                  std::to_string(progress.total_objects) + " objects, " + format_bytes(progress.received_bytes) +
                  (rate ? ", " + format_bytes(rate) + "/s" : ""));
  };
}

}  // namespace

Command source_command() {
  return {"source", "Check out a recipe, directory, git URL or sdist at a ref, with submodules and patches",
          [](CLI::App& app) {
            struct Options {
              std::string what, ref, recipe, dest, subdirectory;
              std::vector<std::string> mirrors, patches;
              SettingFlags settings;
              bool refresh = false, no_submodules = false, json = false;
              unsigned threads = 8;
            };
            auto options = std::make_shared<Options>();
            app.add_option("what", options->what,
                           "RECIPE | PATH (a git repository or a directory, taken as it is on disk) | URL (git+URL@REF"
                           "#subdirectory=DIR too) | pypi:NAME[==VERSION] | an sdist file (.tar.gz, .zip)")
                ->required();
            app.add_option("--subdirectory", options->subdirectory,
                           "The project's directory inside the tree (checked to exist and hold setup.py or "
                           "pyproject.toml)");
            app.add_option("--ref", options->ref,
                           "Tag, branch or commit (default: the recipe's, or the default branch)");
            app.add_option("--recipe", options->recipe,
                           "Check out a PATH, URL or sdist with this recipe (default: the one whose repository or "
                           "PyPI project it is, else cpp-extension)");
            app.add_option("--dest", options->dest,
                           "Work tree to create or update (default: <cache>/worktrees/NAME-REF)");
            add_mirror_option(app, options->mirrors);
            app.add_option("--patch", options->patches, "Apply this git-format patch too (repeatable)");
            add_cache_dir_option(app, options->settings.cache_dir);
            app.add_option("--threads", options->threads, "Submodules fetched and checked out at once")
                ->capture_default_str();
            add_offline_flag(app, options->settings.offline);
            add_recipe_path_option(app, options->settings.recipe_path);
            app.add_flag("--refresh", options->refresh, "Fetch even when the mirror has the ref (moving branches)");
            app.add_flag("--no-submodules", options->no_submodules, "Skip submodules");
            add_json_flag(app, options->json, "Print the source manifest as JSON");
            return [options]() {
              auto settings = Settings::load(options->settings.by_key());
              const CacheLayout cache(settings.made_cache_dir());
              auto book = RecipeBook::load_for(settings);
              StatusLine status(stderr);
              MirrorCache mirrors(cache.root(), fetch_progress(status));
              const auto rewriter = make_url_rewriter(settings, options->mirrors);
              SdistFetcher sdists(settings, rewriter);
              auto target = resolve_source_target({options->what, options->ref, options->recipe, options->subdirectory},
                                                  book, mirrors, settings.offline(), &sdists, &rewriter);
              auto request = make_checkout_request(target, settings, options->mirrors, options->patches,
                                                   options->dest.empty()
                                                       ? cache.worktree(target.name, target.work_tree_name)
                                                       : checked_user_path(options->dest, "--dest"));
              for (const auto& note : target.notes) status.print("note: " + note);
              for (const auto& warning : target.warnings) status.print("note: " + warning);
              request.submodules = target.submodules && !options->no_submodules;
              // an sdist's or a snapshot's mirror has no remote to fetch
              request.refresh = options->refresh && !target.sdist && !target.snapshot;
              request.threads = std::max(1u, options->threads);
              auto start = std::chrono::steady_clock::now();
              auto tree = checkout_source(request, mirrors);
              status.clear();
              double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
              if (options->json) {
                auto out = tree.to_json();
                out["seconds"] = seconds;
                print_json(out);
                return ExitCode::success;
              }
              char elapsed[32];
              std::snprintf(elapsed, sizeof elapsed, "%.1f s", seconds);
              std::cout << "source     " << target.name << " " << tree.ref << " = " << tree.commit.substr(0, 12) << " ("
                        << tree.ref_kind << ") from " << tree.fetch_url << "\n"
                        << "mirrors    "
                        << (tree.sdist     ? "the commit made from the sdist below"
                            : tree.fetched ? "fetched what was missing"
                                           : "everything from the mirrors (no network used)")
                        << "\n"
                        << "submodules " << tree.submodules.size() << "\n";
              if (tree.sdist)
                std::cout << "sdist      " << tree.sdist->file << " sha256 " << tree.sdist->sha256.substr(0, 16)
                          << "... ("
                          << (tree.sdist->index.empty() ? "a local file"
                              : tree.sdist->index_hash  ? "as the index lists it"
                                                        : "the index lists none")
                          << ") from " << tree.sdist->url << "\n";
              if (tree.snapshot)
                std::cout << "snapshot   " << tree.snapshot->kind_name() << " " << tree.snapshot->path
                          << " as it is on disk"
                          << (tree.snapshot->kind == LocalSnapshot::Kind::working_tree
                                  ? ": " + tree.snapshot->base_description + " and " +
                                        std::to_string(tree.snapshot->edited.size()) + " edited paths"
                                  : ": " + std::to_string(tree.snapshot->files) + " files")
                          << "\n";
              if (!tree.subdirectory.empty()) std::cout << "project    " << tree.subdirectory << "/\n";
              for (const auto& patch : tree.patches)
                std::cout << "patch      " << patch.file << " (" << patch.origin << ", sha256 "
                          << patch.sha256.substr(0, 12) << ")\n";
              std::cout << "tree       " << tree.dir.string() << (tree.reused ? " (updated in place)" : "") << " in "
                        << elapsed << "\n";
              return ExitCode::success;
            };
          }};
}

}  // namespace archbuild
