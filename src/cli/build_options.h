#pragma once

#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/common_options.h"
#include "pipeline/build_request.h"

namespace archbuild {

// --env KEY=VALUE items as a map. Throws UserError(bad_input) for a
// malformed item or a variable archbuild sets itself (naming the option
// that controls it).
std::map<std::string, std::string> parse_env_assignments(const std::vector<std::string>& items);

// The command-line options `plan` and `build` share, turned into a BuildRequest.
struct BuildOptions {
  std::string what, arch, ref, recipe, subdirectory, cuda, out, torch_wheel;
  std::vector<std::string> patches, mirrors, env, secret_env;
  SettingFlags settings;
  TestOptions tests;
  bool json = false, no_validate = false, rebuild = false, use_installed_torch = false, keep_project_archs = false,
       allow_network = false, no_cuda_switches = false;

  void declare(CLI::App& app);
  BuildRequest request() const;  // throws UserError(bad_input) for a bad --env
};

}  // namespace archbuild
