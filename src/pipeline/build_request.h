#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "arch/arch_target.h"

namespace archbuild {

// One build as asked: what the command line (or a matrix cell) says, before
// anything is resolved. Plain data; the CLI fills it from its options.
struct BuildRequest {
  std::string what;                        // RECIPE | PATH | URL | pypi:NAME[==VERSION] | sdist file
  std::string arch;                        // arch spec: native, official, "8.0;9.0+PTX", ...
  std::optional<ArchList> archs;           // a dependency built first: its parent's resolved list, as is
  std::string ref;                         // empty: the recipe's default, or the default branch
  std::string recipe;                      // build a PATH or URL with this recipe
  std::string subdirectory;                // --subdirectory: the project's directory inside the tree
  std::string cuda;                        // CUDA version; empty: the installed one
  std::filesystem::path out;               // empty: <cache>/builds/NAME-REF
  std::vector<std::string> patches;        // extra patch files
  std::vector<std::string> mirrors;        // URL rewrites FROM=TO
  std::map<std::string, std::string> env;  // --env KEY=VALUE, checked: build environment over the recipe's (in the key)
  std::filesystem::path torch_wheel;       // build an extension against this wheel
  bool use_installed_torch = false;        // ... or against the interpreter's torch
  bool no_validate = false;                // publish without validating (recorded)
  bool rebuild = false;                    // build even on a cache hit
  bool keep_project_archs = false;         // do not rewrite the project's nvcc arch flags
  bool allow_network = false;              // let the build step reach the network (recorded in the manifest)
  bool no_cuda_switches = false;           // never set the switches a CPU-only result names
  std::string test_command;                // --test: the project's tests instead of the recipe's [tests]
  std::optional<double> test_timeout_seconds;  // --test-timeout
  std::optional<unsigned> max_failed_tests;    // --max-failed-tests
  // Settings given on the command line, by setting key (config/settings):
  // cache_dir, jobs, python, compiler_launcher, compiler_cache_remote, offline.
  std::map<std::string, std::string> setting_flags;
};

}  // namespace archbuild
