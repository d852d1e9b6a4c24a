#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/common_options.h"
#include "pipeline/build_request.h"

namespace archbuild {

// The command-line options `plan` and `build` share, turned into a BuildRequest.
struct BuildOptions {
  std::string what, arch, ref, recipe, cuda, out, torch_wheel;
  std::vector<std::string> patches, mirrors, env;
  SettingFlags settings;
  TestOptions tests;
  bool json = false, no_validate = false, rebuild = false, use_installed_torch = false, keep_project_archs = false,
       allow_network = false;

  void declare(CLI::App& app);
  BuildRequest request() const;
};

}  // namespace archbuild
