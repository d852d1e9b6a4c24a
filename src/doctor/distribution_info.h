#pragma once

#include <optional>
#include <string>

namespace archbuild {

// The installed distribution a top-level package of site-packages belongs
// to, from its `*.dist-info` (top_level.txt, else RECORD's paths) and
// METADATA: what doctor needs to name a runnable source for it.
struct DistributionInfo {
  std::string name;        // "cupy-cuda13x", as METADATA spells it
  std::string version;     // "13.6.0"
  std::string repository;  // https://HOST/OWNER/REPO from a Project-URL / Home-page, "" when none
  // Name and version are METADATA's, unchecked: the reader checks them
  // (valid_project_name, is_pep440_version) before printing a command.
};

std::optional<DistributionInfo> distribution_of(const std::string& site_dir, const std::string& package);

}  // namespace archbuild
