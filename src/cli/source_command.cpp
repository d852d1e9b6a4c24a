#include <iostream>
#include <map>
#include <mutex>

#include "cli/command.h"
#include "cli/host_context.h"
#include "config/user_config.h"
#include "core/cache_dir.h"
#include "core/error.h"
#include "core/system_info.h"
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
  return {"source", "Check out a recipe, directory or git URL at a ref, with submodules and patches",
          [](CLI::App& app) {
            struct Options {
              std::string what, ref, dest, cache_dir;
              std::vector<std::string> mirrors, patches;
              bool offline = false, refresh = false, no_submodules = false, json = false;
              unsigned threads = 8;
            };
            auto options = std::make_shared<Options>();
            app.add_option("what", options->what, "RECIPE | PATH (a git repository) | URL")->required();
            app.add_option("--ref", options->ref, "Tag, branch or commit (default: the recipe's, or the default branch)");
            app.add_option("--dest", options->dest, "Work tree to create or update (default: <cache>/worktrees/NAME-REF)");
            app.add_option("--mirror", options->mirrors, "URL rewrite FROM=TO, like git's insteadOf (repeatable)");
            app.add_option("--patch", options->patches, "Apply this git-format patch too (repeatable)");
            app.add_option("--cache-dir", options->cache_dir, "archbuild's cache (default: $ARCHBUILD_CACHE_DIR, ~/.cache/archbuild)");
            app.add_option("--threads", options->threads, "Submodules fetched and checked out at once")->capture_default_str();
            app.add_flag("--offline", options->offline, "Never fetch: use the mirrors as they are");
            app.add_flag("--refresh", options->refresh, "Fetch even when the mirror has the ref (moving branches)");
            app.add_flag("--no-submodules", options->no_submodules, "Skip submodules");
            app.add_flag("--json", options->json, "Print the source manifest as JSON");
            app.footer("Exit: 0 checked out; 2 bad recipe, ref, patch or destination; 3 cannot fetch (network, --offline).");
            return [options]() {
              auto cache = resolve_cache_dir(options->cache_dir);
              auto book = RecipeBook::load_default();
              auto config = load_user_config();
              StatusLine status(stderr);
              MirrorCache mirrors(cache, fetch_progress(status));

              CheckoutRequest request;
              request.rewriter = UrlRewriter(config.mirrors);
              for (const auto& rule : options->mirrors) request.rewriter.add_option(rule);
              auto target = resolve_source_target(options->what, options->ref, book, mirrors, options->offline);
              request.url = target.url;
              request.ref = target.ref;
              request.submodules = target.submodules && !options->no_submodules;
              request.offline = options->offline;
              request.refresh = options->refresh;
              request.threads = std::max(1u, options->threads);
              request.patches = target.patches;
              for (const auto& patch : options->patches) {
                std::error_code ec;
                if (!std::filesystem::is_regular_file(patch, ec)) fail_bad_input("--patch " + patch + ": no such file");
                request.patches.push_back({std::filesystem::absolute(patch), "--patch"});
              }
              request.dest = options->dest.empty() ? cache / "worktrees" / (target.name + "-" + path_safe(target.ref))
                                                   : std::filesystem::path(options->dest);
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
                        << (tree.fetched ? "fetched what was missing" : "everything from the mirrors (no network used)") << "\n"
                        << "submodules " << tree.submodules.size() << "\n";
              for (const auto& patch : tree.patches)
                std::cout << "patch      " << patch.file << " (" << patch.origin << ", sha256 " << patch.sha256.substr(0, 12) << ")\n";
              std::cout << "tree       " << tree.dir.string() << (tree.reused ? " (updated in place)" : "") << " in "
                        << elapsed << "\n";
              return ExitCode::success;
            };
          }};
}

}  // namespace archbuild
