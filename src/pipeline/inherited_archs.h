#pragma once

#include <string>

#include "arch/arch_target.h"
#include "core/cache_layout.h"
#include "pipeline/build_intent.h"
#include "recipe/recipe.h"

namespace archbuild {

// An extension build without --arch takes the arch list of the torch it
// builds against, from that wheel's build record (.dist-info/archbuild.json):
// the --torch-wheel file, the installed torch (--use-installed-torch), or the
// cache's torch when the cache holds torch for one arch list only.
struct InheritedArchs {
  ArchList list;       // as the record holds it: 8.0;9.0+PTX
  std::string origin;  // "torch 2.9.1+cu130.sm90 (its .dist-info/archbuild.json)"
};

// Throws UserError(bad_input) saying why no arch list can be taken (a recipe
// without dependencies, a torch archbuild did not build, several arch lists
// in the cache) and that --arch is needed.
InheritedArchs inherit_archs(const TorchSource& torch, const Recipe& recipe, const CacheLayout& cache,
                             const std::string& cuda, const std::string& python);

}  // namespace archbuild
