#pragma once

#include <string>

#include "pipeline/build_context.h"

namespace archbuild {

// An extension build without --arch takes the arch list of the torch it
// builds against, from that wheel's build record (.dist-info/archbuild.json):
// the --torch-wheel file, the installed torch (--use-installed-torch), or the
// cache's torch when the cache holds torch for one arch list only.
struct InheritedArchs {
  std::string spec;    // "8.0;9.0+PTX": an arch spec for HostContext::resolve
  std::string origin;  // "torch 2.9.1+cu130.sm90 (its .dist-info/archbuild.json)"
};

// Throws UserError(bad_input) saying why no arch list can be taken (a recipe
// without dependencies, a torch archbuild did not build, several arch lists
// in the cache) and that --arch is needed.
InheritedArchs inherit_archs(const BuildRequest& request, const Recipe& recipe, const CacheLayout& cache,
                             const std::string& cuda, const std::string& python);

}  // namespace archbuild
