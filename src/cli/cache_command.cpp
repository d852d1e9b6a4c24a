#include <iomanip>
#include <iostream>
#include <sstream>

#include "cache/build_report.h"
#include "cache/cache_command_inputs.h"
#include "cache/cache_command_results.h"
#include "cache/cache_index.h"
#include "cache/cache_key.h"
#include "cache/cache_listing.h"
#include "cache/cache_push.h"
#include "cache/cache_verify.h"
#include "cache/install_lines.h"
#include "cache/provenance.h"
#include "cache/simple_index.h"
#include "cache/store_listing.h"
#include "cache/store_maintenance.h"
#include "cache/wheel_store.h"
#include "cli/command.h"
#include "cli/common_options.h"
#include "cli/json_output.h"
#include "cli/push_output.h"
#include "cli/remote_cache.h"
#include "config/setting_names.h"
#include "config/settings.h"
#include "core/cache_layout.h"
#include "core/ed25519.h"
#include "core/error.h"
#include "core/file_lock.h"
#include "remote/s3_settings.h"
#include "source/pypi_sdist.h"
#include "ui/terminal.h"

namespace archbuild {

namespace {

struct CacheOptions {
  std::string cache_dir;
  bool json = false;
  std::vector<std::string> trusted_keys;  // public key PEM files: signatures must verify with one
  bool require_signature = false;
  std::vector<Ed25519Key> keys() const { return read_trusted_keys(trusted_keys); }
  std::filesystem::path resolve() const { return Settings::load({{setting_name::cache_dir, cache_dir}}).cache_dir(); }
};

CLI::App* with_cache_options(CLI::App* sub, CacheOptions& options) {
  add_cache_dir_option(*sub, options.cache_dir);
  add_json_flag(*sub, options.json);
  return sub;
}

std::string megabytes(uintmax_t bytes) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << bytes / 1048576.0 << " MiB";
  return out.str();
}

// The kernels each wheel's device checks launched, demangled, as the manifest recorded them.
void print_launched_kernels(const BuildReport& manifest) {
  for (const auto& census : manifest.kernel_censuses()) {
    std::cout << paint("kernels", Style::bold) << "    " << (census.summary.empty() ? "?" : census.summary) << "\n";
    for (const auto& kernel : census.launched) std::cout << "           " << (kernel.empty() ? "?" : kernel) << "\n";
  }
  for (const auto& wheel : manifest.validation)
    if (!wheel.audit.empty()) std::cout << paint("audit", Style::bold) << "      " << wheel.audit << "\n";
  // --portable: what the repair bundled, and the tag it gave
  for (const auto& repair : manifest.repair)
    if (repair.is_object() && repair.contains("summary") && repair["summary"].is_string())
      std::cout << paint("repair", Style::bold) << "     " << repair["summary"].get<std::string>() << "\n";
}

ExitCode run_ls(const CacheOptions& options) {
  WheelStore store(options.resolve());
  auto entries = store.entries();
  if (options.json) {
    print_json(listing_json(options.resolve(), entries));
    return ExitCode::success;
  }
  if (entries.empty()) {
    std::cout << "no published builds in " << store.root().string() << "\n";
    return ExitCode::success;
  }
  std::cout << std::left << std::setw(14) << "KEY" << std::setw(17) << "PUBLISHED" << std::setw(10) << "CHECKED"
            << std::setw(11) << "SIZE"
            << "WHEEL\n";
  for (const auto& row : listing_rows(entries))
    std::cout << std::left << std::setw(14) << row.key << std::setw(17) << row.published << std::setw(10)
              << row.validation << std::setw(11) << megabytes(row.bytes) << row.wheel << "\n";
  std::cout << entries.size() << " build" << (entries.size() == 1 ? "" : "s") << "; index: file://"
            << cache_index_paths(options.resolve()).simple_dir.string() << "\n";
  return ExitCode::success;
}

// `cache show`'s lines for one entry; the keys check its provenance's signature.
void print_shown_entry(const StoreEntry& entry, const CacheOptions& options) {
  const auto manifest = entry.manifest.value_or(BuildReport{});
  std::cout << paint("key", Style::bold) << "        " << entry.hash << "\n"
            << paint("dir", Style::bold) << "        " << entry.dir.string() << "\n"
            << paint("published", Style::bold) << "  " << (manifest.published_at.empty() ? "?" : manifest.published_at)
            << "\n"
            << paint("validation", Style::bold) << " "
            << (manifest.validation_scope.empty() ? validation_word(entry) : manifest.validation_scope) << "\n";
  if (const auto build = build_summary(manifest))
    std::cout << paint("build", Style::bold) << "      " << std::fixed << std::setprecision(1) << build->seconds
              << " s, jobs " << std::setprecision(0) << build->jobs << ", OOM retries " << build->oom_retries << "\n";
  for (const auto& wheel : manifest.wheels)
    std::cout << paint("wheel", Style::bold) << "      " << wheel.file << "\n           sha256 " << wheel.sha256
              << "\n";
  print_launched_kernels(manifest);
  const auto keys = options.keys();
  std::cout << paint("provenance", Style::bold) << " " << describe_provenance(entry.dir, keys) << "\n";
  for (const auto& problem : entry_provenance_problems(entry, keys, false))
    std::cout << "           " << problem << "\n";
  const auto sbom = entry_sbom(entry);
  std::cout << paint("sbom", Style::bold) << "       "
            << (sbom ? sbom->string() + " (CycloneDX 1.5)" : std::string("none")) << "\n";
  std::cout << paint("inputs", Style::bold) << "\n";
  for (const auto& [name, value] : entry.inputs.values()) std::cout << "  " << name << " " << value << "\n";
}

ExitCode run_show(const CacheOptions& options, const std::string& prefix) {
  check_key_prefix(prefix);  // before the cache dir is resolved: its message comes first
  const auto entry = entry_by_key_prefix(WheelStore(options.resolve()), prefix);
  if (options.json)
    print_json(shown_entry_json(entry));
  else
    print_shown_entry(entry, options);
  return ExitCode::success;
}

ExitCode run_verify(const CacheOptions& options) {
  const auto cache_dir = options.resolve();
  const auto result =
      verify_local_cache(cache_dir, options.keys(), options.require_signature, [&](const VerifiedEntry& entry) {
        if (options.json) return;
        std::cout << verdict_label(entry.problems.empty() ? CheckVerdict::ok : CheckVerdict::fail) << " "
                  << entry.hash.substr(0, 12) << " " << (entry.first_wheel.empty() ? "(no wheel)" : entry.first_wheel)
                  << "\n";
        for (const auto& text : entry.problems) std::cout << "     " << text << "\n";
      });
  if (options.json) {
    print_json(verify_result_json(result));
  } else {
    std::cout << verdict_label(result.index_problems.empty() ? CheckVerdict::ok : CheckVerdict::fail) << " index "
              << result.index_dir.string() << "\n";
    for (const auto& text : result.index_problems) std::cout << "     " << text << "\n";
    for (const auto& path : result.unfinished_publishes)
      std::cout << verdict_label(CheckVerdict::warn)
                << " unfinished publish (its process is gone; `cache gc` removes it): " << path.string() << "\n";
    const auto count = result.entries.size();
    std::cout << count << " build" << (count == 1 ? "" : "s") << " checked, " << result.bad_entries() << " bad\n";
  }
  return verify_exit_code(result);
}

ExitCode run_push(const CacheOptions& options, const std::string& dest_text) {
  const auto dest = push_directory(dest_text);
  const WheelStore from(options.resolve());
  auto result = push_cache(from, dest);
  if (options.json) {
    auto json = push_outcome_json(result);
    json.update(pushed_index_json(result, dest));
    print_json(json);
  } else {
    std::cout << print_push_outcome(result, from.root(), "copied again") << "; " << result.index.wheels.size()
              << " wheel" << (result.index.wheels.size() == 1 ? "" : "s") << " in " << result.index.simple_dir.string()
              << "\n"
              << "serve it: python3 -m http.server --directory " << dest.string()
              << " PORT, then pip install --index-url http://HOST:PORT/simple PROJECT\n";
  }
  return push_exit_code(result, "DEST");
}

ExitCode run_gc(const CacheOptions& options, size_t keep, bool dry_run) {
  if (keep == 0) fail_bad_input("--keep must be at least 1 (to empty the cache, delete its store/ directory)");
  // A long gc says what went as it goes; --json reports it all at the end.
  auto print_step = [&](const GcStep& step) {
    if (options.json) return;
    if (!step.removed)
      std::cout << "skipped " << step.entry.hash.substr(0, 12) << ": removed or replaced meanwhile (another cache gc "
                << "or build)\n";
    else
      std::cout << (dry_run ? "would remove " : "removed ") << step.entry.hash.substr(0, 12) << " "
                << gc_group(step.entry) << " (" << short_publish_time(step.entry) << ")\n";
  };
  auto result = collect_garbage(options.resolve(), keep, dry_run, print_step);
  const auto settings = Settings::load({{setting_name::cache_dir, options.cache_dir}});
  const auto stale_downloads = SdistFetcher(settings).remove_stale_downloads(dry_run);
  if (options.json) {
    print_json(gc_result_json(result, keep, dry_run, stale_downloads));
  } else {
    for (const auto& path : result.leftovers)
      std::cout << (dry_run ? "would remove " : "removed ") << "unfinished publish " << path.string() << "\n";
    for (const auto& path : stale_downloads)
      std::cout << (dry_run ? "would remove " : "removed ") << "interrupted sdist download " << path << "\n";
    std::cout << (dry_run ? "would free " : "freed ") << megabytes(result.freed_bytes) << "; kept the newest " << keep
              << " per project, arch list and machine\n";
  }
  return ExitCode::success;
}

ExitCode run_keygen(const std::string& path) {
  Ed25519Key::generate(path);
  const auto key = Ed25519Key::load_private(path);
  std::cout << "private key " << path << " (keep it; sign with --signing-key or the signing_key "
            << "setting)\npublic key  " << path << ".pub (give it to `cache verify "
            << "--trusted-key`)\nkey id      " << key.key_id() << "\n";
  return ExitCode::success;
}

ExitCode run_index(const std::string& wheels_dir, const std::string& index_dir) {
  const auto [wheels, target] = simple_index_place(wheels_dir, index_dir);
  auto indexed = write_simple_index(wheels, target);
  std::cout << "indexed " << indexed.size() << " wheel" << (indexed.size() == 1 ? "" : "s") << " in " << target.string()
            << "\n";
  for (const auto& wheel : indexed)
    std::cout << "  " << wheel.project << "  " << wheel.file.filename().string() << "\n";
  std::cout << "pip install --index-url file://" << target.string() << " PROJECT\n"
            << "pip install --find-links " << wheels.string() << " PROJECT\n";
  return ExitCode::success;
}

ExitCode run_why(const CacheOptions& options, const std::string& a, const std::string& b) {
  auto differences = diff_key_texts(read_key_text_at(a), read_key_text_at(b));
  if (options.json) {
    print_json(key_differences_json(differences));
  } else if (differences.empty()) {
    std::cout << "same key: every input is equal\n";
  } else {
    for (const auto& d : differences)
      std::cout << paint(d.key, Style::bold) << "\n  - " << (d.before.empty() ? "(absent)" : d.before) << "\n  + "
                << (d.after.empty() ? "(absent)" : d.after) << "\n";
  }
  return key_differences_exit_code(differences);
}

}  // namespace

namespace {

// Every `cache` subcommand and the options they share, declared once; run()
// hands the parsed one to its run_* function.
struct CacheSubcommands {
  std::shared_ptr<CacheOptions> options = std::make_shared<CacheOptions>();
  std::shared_ptr<RemoteOptions> remote_options = std::make_shared<RemoteOptions>();
  std::string remote, show_key, keygen_path, push_dest, why_a, why_b, index_wheels, index_target;
  size_t keep = 2;
  bool dry_run = false;
  CLI::App *ls = nullptr, *show = nullptr, *verify = nullptr, *keygen = nullptr, *gc = nullptr, *push = nullptr,
           *why = nullptr, *index = nullptr, *index_config = nullptr;

  void declare(CLI::App& app) {
    // In the order `cache --help` lists them.
    declare_ls(app);
    declare_show(app);
    declare_verify(app);
    declare_gc(app);
    declare_push(app);
    declare_keygen(app);
    declare_why(app);
    declare_index(app);
    declare_index_config(app);
    app.require_subcommand(1);
  }

  void declare_ls(CLI::App& app) {
    ls = with_cache_options(app.add_subcommand("ls", "List published builds, newest first"), *options);
  }

  void declare_show(CLI::App& app) {
    show = with_cache_options(app.add_subcommand("show", "One build: inputs, wheels, validation"), *options);
    show->add_option("key", show_key, "The key or its first characters")->required();
    show->add_option("--trusted-key", options->trusted_keys, "A public key (PEM) to check the signature with");
  }

  void declare_verify(CLI::App& app) {
    verify = with_cache_options(
        app.add_subcommand("verify", "Recheck every wheel's hash, RECORD, manifest, provenance and the index"),
        *options);
    verify->add_option("--trusted-key", options->trusted_keys,
                       "A public key (PEM) whose signature on the provenance counts (repeatable)");
    verify->add_option("location", remote, "Check a bucket instead: s3://BUCKET/PREFIX");
    add_transfer_options(*verify, *remote_options);
    verify->add_flag("--require-signature", options->require_signature,
                     "Every entry's provenance must carry a signature that verifies with a --trusted-key");
  }

  void declare_gc(CLI::App& app) {
    gc = with_cache_options(app.add_subcommand("gc", "Keep the newest N builds per project, arch list and machine"),
                            *options);
    gc->add_option("--keep", keep, "How many to keep per project, arch list and machine (default 2)")
        ->check(CLI::Range(0, 1000000));  // 0 gets its own message
    gc->add_flag("--dry-run", dry_run, "Say what would go, remove nothing");
    gc->add_option("location", remote, "Collect in a bucket instead: s3://BUCKET/PREFIX");
    add_transfer_options(*gc, *remote_options);
  }

  void declare_push(CLI::App& app) {
    push = with_cache_options(app.add_subcommand("push",
                                                 "Copy published builds to a shared directory or a bucket "
                                                 "(s3://BUCKET/PREFIX), or upload them to a package server "
                                                 "(--repository-url)"),
                              *options);
    push->add_option("dest", push_dest,
                     "A shared directory (laid out like a cache: store/, wheels/, simple/) or s3://BUCKET/PREFIX");
    add_upload_options(*push, *remote_options);
    add_transfer_options(*push, *remote_options);
    push->add_option("--public-url", remote_options->public_url,
                     "With s3://: the URL readers reach the bucket's prefix through (for the printed index URL)");
  }

  void declare_keygen(CLI::App& app) {
    keygen = app.add_subcommand("keygen", "Make an ed25519 key pair for signing provenance (PATH, PATH.pub)");
    keygen->add_option("path", keygen_path, "Where the private key goes (mode 0600; never overwritten)")->required();
  }

  void declare_why(CLI::App& app) {
    why = app.add_subcommand("why", "Diff two builds' key texts (key.txt files or build dirs)");
    why->add_option("a", why_a, "First key.txt or build dir")->required();
    why->add_option("b", why_b, "Second key.txt or build dir")->required();
    add_json_flag(*why, options->json, "Print JSON");
  }

  void declare_index(CLI::App& app) {
    index = app.add_subcommand("index", "Write a PEP 503 simple index over a directory of wheels");
    index->add_option("wheels", index_wheels, "Directory of wheels")->required();
    index->add_option("--index", index_target, "Where the index goes (default: WHEELS/simple)");
  }

  void declare_index_config(CLI::App& app) {
    index_config =
        app.add_subcommand("index-config",
                           "Print the pip.conf and uv.toml lines that make pip and uv read the cache's index");
    add_cache_dir_option(*index_config, options->cache_dir);
    index_config->add_option("location", remote, "A bucket's index instead: s3://BUCKET/PREFIX");
    index_config->add_option("--public-url", remote_options->public_url,
                             "The URL readers reach the bucket's prefix through (a server in front of it)");
  }

  ExitCode run() const {
    if (ls->parsed()) return run_ls(*options);
    if (show->parsed()) return run_show(*options, show_key);
    if (verify->parsed()) return run_any_verify();
    if (gc->parsed()) return run_any_gc();
    if (push->parsed()) return run_any_push();
    if (keygen->parsed()) return run_keygen(keygen_path);
    if (index_config->parsed()) return run_index_config();
    if (index->parsed()) return run_index(index_wheels, index_target);
    return run_why(*options, why_a, why_b);
  }

  ExitCode run_any_verify() const {
    // Without a key no signature can verify: every signed entry would read as changed.
    if (options->require_signature && options->trusted_keys.empty())
      fail_bad_input("--require-signature needs --trusted-key PUB: the public key whose signatures count");
    if (!remote.empty())
      return run_s3_verify(options->cache_dir, remote, *remote_options, options->keys(), options->require_signature,
                           options->json);
    return run_verify(*options);
  }

  ExitCode run_any_gc() const {
    if (remote.empty()) return run_gc(*options, keep, dry_run);
    if (keep == 0) fail_bad_input("--keep must be at least 1");
    return run_s3_gc(remote, *remote_options, keep, dry_run, options->json);
  }

  // A package server, a bucket or a directory, each with the options it takes.
  ExitCode run_any_push() const {
    // As with twine, TWINE_REPOSITORY_URL stands for --repository-url (when no DEST is given).
    const bool upload = !remote_options->repository_url.empty() || !remote_options->repository_name.empty() ||
                        (push_dest.empty() && process_environment()("TWINE_REPOSITORY_URL"));
    if (upload) return run_upload();
    if (push_dest.empty())
      fail_bad_input("cache push: give DEST (a directory or s3://BUCKET/PREFIX) or --repository-url URL");
    if (remote_options->with_variants)
      fail_bad_input(
          "cache push: --with-variants is for --repository-url (a bucket or a directory gets the variant wheels "
          "anyway)");
    if (is_s3_location(push_dest)) return run_s3_push(options->cache_dir, push_dest, *remote_options, options->json);
    if (!remote_options->public_url.empty()) fail_bad_input("cache push: --public-url is for s3:// destinations");
    // A directory is written through the file system: no request to time or retry.
    for (const char* transfer : {"--timeout", "--retries", "--lock-stale-after"})
      if (push->count(transfer))
        fail_bad_input(std::string("cache push: ") + transfer +
                       " is for s3:// destinations and --repository-url, not a directory");
    return run_push(*options, push_dest);
  }

  ExitCode run_upload() const {
    if (!push_dest.empty()) fail_bad_input("cache push: give DEST or --repository-url/--repository, not both");
    if (!remote_options->public_url.empty())
      fail_bad_input("cache push: --public-url is for s3:// destinations, not --repository-url");
    if (push->count("--lock-stale-after"))
      fail_bad_input("cache push: --lock-stale-after is for s3:// destinations, not --repository-url");
    return run_repository_upload(options->cache_dir, *remote_options, options->json);
  }

  ExitCode run_index_config() const {
    if (!remote.empty()) return run_s3_index_config(remote, *remote_options);
    if (!remote_options->public_url.empty())
      fail_bad_input(
          "cache index-config: --public-url is for s3://BUCKET/PREFIX (a local cache's index is its directory)");
    std::cout << index_configuration(cache_index_paths(options->resolve()).simple_dir);
    return ExitCode::success;
  }
};

}  // namespace

Command cache_command() {
  return {"cache", "The wheel cache and its index: ls, show, verify, gc, push, why, keygen, index, index-config",
          [](CLI::App& app) {
            auto subcommands = std::make_shared<CacheSubcommands>();
            subcommands->declare(app);
            return [subcommands]() -> ExitCode { return subcommands->run(); };
          }};
}

}  // namespace archbuild
