#pragma once

#include <string>
#include <vector>

#include "core/ed25519.h"
#include "core/exit_code.h"

namespace CLI {
class App;
}

namespace archbuild {

// `cache push|verify|gc|index-config` aimed elsewhere than a directory: a
// bucket (s3://BUCKET/PREFIX) or a package server's upload API.
struct RemoteOptions {
  std::string repository_url;   // --repository-url
  std::string repository_name;  // --repository (a ~/.pypirc section)
  bool with_variants = false;   // upload variant wheels too
  int timeout_seconds = 60;
  int attempts = 4;
  int lock_stale_seconds = 600;
  std::string public_url;  // index-config: the URL readers use (a server in front of the bucket)
};

void add_transfer_options(CLI::App& app, RemoteOptions& options);
void add_upload_options(CLI::App& app, RemoteOptions& options);

ExitCode run_s3_push(const std::string& cache_dir, const std::string& location, const RemoteOptions& options,
                     bool json);
ExitCode run_repository_upload(const std::string& cache_dir, const RemoteOptions& options, bool json);
ExitCode run_s3_verify(const std::string& cache_dir, const std::string& location, const RemoteOptions& options,
                       const std::vector<Ed25519Key>& keys, bool require_signature, bool json);
ExitCode run_s3_gc(const std::string& location, const RemoteOptions& options, size_t keep, bool dry_run, bool json);
ExitCode run_s3_index_config(const std::string& location, const RemoteOptions& options);

}  // namespace archbuild
