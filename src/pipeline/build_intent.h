#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/build_request.h"

namespace archbuild {

// Where an extension's torch comes from, as asked: the cache's (built first
// when missing), a wheel file, or the interpreter's installed torch.
struct TorchSource {
  enum class Kind { cache, wheel, installed };
  Kind kind = Kind::cache;
  std::filesystem::path wheel;  // Kind::wheel: the --torch-wheel file, as given

  bool from_cache() const { return kind == Kind::cache; }
  // "--torch-wheel /w/torch.whl", "--use-installed-torch", "the cache's torch".
  std::string describe() const;
};

// What validation does, as asked.
struct ValidationPolicy {
  bool validate = true;                        // false: --no-validate (recorded in the manifest)
  std::optional<double> test_timeout_seconds;  // --test-timeout
  std::optional<unsigned> max_failed_tests;    // --max-failed-tests
};

// What a build asks beyond its target and arch list, as typed values the
// session reads (the raw request stays with the CLI). A dependency built
// first takes only `cuda`, `mirrors` and `setting_flags` from it.
struct BuildIntent {
  bool rebuild = false;             // build even on a cache hit
  bool keep_project_archs = false;  // leave the project's nvcc arch flags alone
  bool allow_network = false;       // the build step may reach the network (recorded)
  bool set_cuda_switches = true;    // a CPU-only result's named switches are set and the build run again
  TorchSource torch;
  ValidationPolicy validation;
  std::string cuda;                                  // --cuda; empty: the installed toolkit
  std::vector<std::string> mirrors;                  // URL rewrites FROM=TO
  std::vector<std::string> patches;                  // extra patch files
  std::map<std::string, std::string> setting_flags;  // command-line settings, by key

  static BuildIntent of(const BuildRequest& request);
};

}  // namespace archbuild
