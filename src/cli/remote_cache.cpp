#include "cli/remote_cache.h"

#include <cstdlib>
#include <iostream>

#include <CLI/CLI.hpp>

#include "cache/install_lines.h"
#include "cache/wheel_store.h"
#include "cli/json_output.h"
#include "cli/push_output.h"
#include "config/setting_names.h"
#include "config/settings.h"
#include "core/error.h"
#include "core/private_dir.h"
#include "core/system_info.h"
#include "remote/package_upload.h"
#include "remote/s3_cache.h"
#include "ui/terminal.h"

namespace archbuild {

namespace {

HttpPolicy policy_of(const RemoteOptions& options) {
  HttpPolicy policy;
  policy.timeout_seconds = options.timeout_seconds;
  policy.attempts = options.attempts;
  return policy;
}

S3CacheOptions cache_options_of(const RemoteOptions& options) {
  S3CacheOptions cache;
  cache.lock_stale_after = std::chrono::seconds(options.lock_stale_seconds);
  // The tests' way to kill a push between two objects (docs/TESTING.md).
  if (const char* pause = std::getenv("ARCHBUILD_PUSH_PAUSE_MS"); pause && *pause)
    cache.pause_between_objects = std::chrono::milliseconds(std::atoi(pause));
  return cache;
}

// One bucket session: the location, the settings and a signing transport.
struct Bucket {
  explicit Bucket(const std::string& location, const RemoteOptions& options)
      : settings(resolve_s3_settings(process_environment())),
        transport(make_s3_transport(settings, policy_of(options))),
        client(settings, parse_s3_location(location), *transport) {}
  S3Settings settings;
  std::unique_ptr<HttpTransport> transport;
  S3Client client;
};

void check_public_url(const RemoteOptions& options) {
  if (!options.public_url.empty()) check_http_url(options.public_url, "--public-url");
}

std::string plural(size_t count, const std::string& word) {
  return std::to_string(count) + " " + word + (count == 1 ? "" : "s");
}

}  // namespace

void add_transfer_options(CLI::App& app, RemoteOptions& options) {
  app.add_option("--timeout", options.timeout_seconds,
                 "Seconds without progress (or to connect) before a request is given up (default 60)")
      ->check(CLI::Range(1, 86400));
  app.add_option("--retries", options.attempts,
                 "Attempts per request when the server is unreachable, stalls or answers 5xx (default 4)")
      ->check(CLI::Range(1, 100));
  app.add_option("--lock-stale-after", options.lock_stale_seconds,
                 "Seconds after which another pusher's unrenewed lock in a bucket is taken over (default 600)")
      ->check(CLI::Range(1, 7 * 86400));
}

void add_upload_options(CLI::App& app, RemoteOptions& options) {
  app.add_option("--repository-url", options.repository_url,
                 "Upload through a package server's upload API (twine's; pypiserver, devpi, Artifactory, ...)");
  app.add_option("--repository", options.repository_name,
                 "A ~/.pypirc section naming the server and its credentials, as twine's -r");
  app.add_flag("--with-variants", options.with_variants, "With --repository-url: send the variant wheels too");
}

ExitCode run_s3_push(const std::string& cache_dir, const std::string& location, const RemoteOptions& options,
                     bool json) {
  check_public_url(options);
  const WheelStore from(Settings::load({{setting_name::cache_dir, cache_dir}}).cache_dir());
  Bucket bucket(location, options);
  auto result = push_to_s3(from, bucket.client, cache_options_of(options));
  const auto index = s3_index_url(bucket.client, options.public_url);
  if (json) {
    auto report = push_outcome_json(result);
    report["dest"] = bucket.client.location().text();
    report["wheels_listed"] = result.listed_wheels;
    report["index_url"] = index;
    print_json(report);
  } else {
    std::cout << print_push_outcome(result, from.root(), "uploaded again") << "; "
              << plural(result.listed_wheels, "wheel") << " listed in " << bucket.client.location().text()
              << "/simple\nindex (through a server that maps a directory to its index.html): " << index << "\n";
  }
  return push_exit_code(result, bucket.client.location().text());
}

ExitCode run_repository_upload(const std::string& cache_dir, const RemoteOptions& options, bool json) {
  const WheelStore from(Settings::load({{setting_name::cache_dir, cache_dir}}).cache_dir());
  const auto target = resolve_upload_target(options.repository_url, options.repository_name, process_environment());
  HttpAuth auth;
  if (!target.username.empty() || !target.password.empty())
    auth = {HttpAuth::Kind::basic, target.username, target.password, {}};
  auto transport = make_curl_transport(auth, policy_of(options));
  std::vector<std::string> not_pushed;
  auto outcomes = upload_to_repository(from, target, *transport, options.with_variants, not_pushed);
  size_t uploaded = 0, there = 0, refused = 0;
  nlohmann::json files = nlohmann::json::array();
  for (const auto& outcome : outcomes) {
    const char* kind = outcome.kind == UploadOutcome::Kind::uploaded        ? "uploaded"
                       : outcome.kind == UploadOutcome::Kind::already_there ? "already_there"
                                                                            : "refused";
    uploaded += outcome.kind == UploadOutcome::Kind::uploaded;
    there += outcome.kind == UploadOutcome::Kind::already_there;
    refused += outcome.kind == UploadOutcome::Kind::refused;
    files.push_back({{"file", outcome.file}, {"outcome", kind}, {"server_said", outcome.why}});
    if (!json) {
      if (outcome.kind == UploadOutcome::Kind::uploaded)
        std::cout << "uploaded " << outcome.file << "\n";
      else if (outcome.kind == UploadOutcome::Kind::already_there)
        std::cout << "already there " << outcome.file << " (" << outcome.why << ")\n";
      else
        std::cout << "REFUSED " << outcome.file << ": " << outcome.why << "\n";
    }
  }
  if (json) {
    print_json({{"repository_url", target.url}, {"files", files}, {"not_pushed", not_pushed}});
  } else {
    for (const auto& line : not_pushed) std::cout << "NOT pushed " << line << "\n";
    std::cout << uploaded << " uploaded, " << there << " already there, " << refused << " refused by " << target.url
              << "\n";
  }
  if (refused || !not_pushed.empty()) {
    std::cerr << "archbuild: error: " << refused << " file(s) refused by " << target.url << ", " << not_pushed.size()
              << " problem(s) in the source cache\n";
    return ExitCode::work_failed;
  }
  return ExitCode::success;
}

ExitCode run_s3_verify(const std::string& cache_dir, const std::string& location, const RemoteOptions& options,
                       const std::vector<Ed25519Key>& keys, bool require_signature, bool json) {
  Bucket bucket(location, options);
  // Entries are downloaded one at a time into archbuild's own cache dir (a
  // temporary name `cache gc` knows), checked, and removed.
  const auto cache = Settings::load({{setting_name::cache_dir, cache_dir}}).made_cache_dir();
  PrivateDir scratch(cache, temporary_prefix_of_this_process("verify"));  // `cache gc` removes it once we are gone
  auto result = verify_s3(bucket.client, scratch.path, keys, require_signature);
  if (json) {
    print_json({{"location", bucket.client.location().text()},
                {"entries", result.entries},
                {"problems", result.problems},
                {"unfinished", result.unfinished},
                {"unlisted", result.unlisted},
                {"stale_links", result.stale_links}});
  } else {
    for (const auto& problem : result.problems)
      std::cout << verdict_label(CheckVerdict::fail) << " " << problem << "\n";
    for (const auto& hash : result.unfinished)
      std::cout << verdict_label(CheckVerdict::warn) << " " << hash.substr(0, 12)
                << ": objects without key.txt (a push killed or under way; listed nowhere; `cache gc` removes it)\n";
    for (const auto& name : result.unlisted)
      std::cout << verdict_label(CheckVerdict::warn) << " simple/: " << name
                << " is in the store but on no page yet (a push killed before listing it; pushing it again lists it)\n";
    for (const auto& document : result.stale_links)
      std::cout << verdict_label(CheckVerdict::warn) << " " << document
                << " is linked with its former sha256 (a push killed between the document and its page; pushing "
                   "again relinks it)\n";
    std::cout << plural(result.entries, "build") << " checked in " << bucket.client.location().text() << ", "
              << plural(result.problems.size(), "problem") << "\n";
  }
  return result.problems.empty() ? ExitCode::success : ExitCode::work_failed;
}

ExitCode run_s3_gc(const std::string& location, const RemoteOptions& options, size_t keep, bool dry_run, bool json) {
  Bucket bucket(location, options);
  nlohmann::json removed = nlohmann::json::array();
  uint64_t freed = 0;
  auto steps = gc_s3(bucket.client, keep, dry_run, cache_options_of(options), [&](const S3GcStep& step) {
    if (!step.removed) {
      if (!json) std::cout << "skipped " << step.hash.substr(0, 12) << ": changed meanwhile\n";
      return;
    }
    freed += step.bytes;
    removed.push_back({{"key", step.hash}, {"group", step.group}, {"bytes", step.bytes}});
    if (!json)
      std::cout << (dry_run ? "would remove " : "removed ") << step.hash.substr(0, 12) << " " << step.group << "\n";
  });
  if (json)
    print_json({{"dry_run", dry_run}, {"keep", keep}, {"removed", removed}, {"freed_bytes", freed}});
  else
    std::cout << (dry_run ? "would free " : "freed ") << format_bytes(freed) << " in "
              << bucket.client.location().text() << "; kept the newest " << keep
              << " per project, arch list and machine\n";
  return ExitCode::success;
}

ExitCode run_s3_index_config(const std::string& location, const RemoteOptions& options) {
  check_public_url(options);
  const auto parsed = parse_s3_location(location);
  S3Settings settings;
  try {
    settings = resolve_s3_settings(process_environment());
  } catch (const UserError&) {
    // Readers need no credentials: only the endpoint matters here.
    auto environment = process_environment();
    auto with_placeholder = [environment](const std::string& name) -> std::optional<std::string> {
      if (name == "AWS_ACCESS_KEY_ID" || name == "AWS_SECRET_ACCESS_KEY") return std::string("unused");
      return environment(name);
    };
    settings = resolve_s3_settings(with_placeholder);
  }
  HttpPolicy policy;
  auto transport = make_curl_transport({}, policy);
  S3Client client(settings, parsed, *transport);
  std::cout << index_configuration_for_url(s3_index_url(client, options.public_url));
  if (options.public_url.empty())
    std::cout << "# The bucket's own URL serves objects, not directory pages: put a server in front that maps\n"
                 "# .../simple/NAME/ to .../simple/NAME/index.html (docs/PUBLISHING.md) and give its URL with\n"
                 "# --public-url.\n";
  return ExitCode::success;
}

}  // namespace archbuild
