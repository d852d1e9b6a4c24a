#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "builder/dependency_env.h"
#include "pipeline/build_context.h"
#include "pipeline/build_outcome.h"
#include "pipeline/pipeline_events.h"

namespace archbuild {

// Builds one dependency (a recipe name) for the context's arch list and
// publishes it to the cache. The build session passes itself.
using DependencyBuilder = std::function<BuildOutcome(const BuildRequest& dependency)>;
// Makes the environment the build runs in (builder/dependency_env.h's
// prepare_dependency_env, or a test's fake).
using DependencyEnvMaker = std::function<DependencyEnv(const DependencyRequest& request)>;

// What a recipe with dependencies (an extension on torch) builds against:
// --use-installed-torch, --torch-wheel, or the cache's wheels for the same
// arch list and toolkit, built first (through `build_dependency`) when the
// cache lacks them. A recipe without dependencies gets its interpreter as is.
DependencyEnv resolve_dependencies(const BuildContext& context, PipelineEvents& events,
                                   const DependencyBuilder& build_dependency,
                                   const DependencyEnvMaker& make_env = prepare_dependency_env);

// The newest published wheel of `dependency` built for `arch_list` (in the
// dependency's dialect) with toolkit `cuda`, and of public version `version`
// when one is given ("2.9.1": a companion's [[pairs]]), if the cache's index
// lists one (read from the index and the candidates' build records, never a
// store scan). Its record's torch must be `installed_torch` (a build against
// the interpreter's torch, installed_torch_line) when one is given, and
// otherwise not an interpreter's.
std::optional<std::filesystem::path> cached_dependency(const CacheLayout& cache, const Recipe& dependency,
                                                       const ArchList& arch_list, const std::string& cuda,
                                                       const std::string& version = "",
                                                       const std::string& installed_torch = "");

// The build of a dependency the cache lacks: the recipe `name` for the same
// arch list (at v`pinned` when a [[pairs]] row pins it), with the parent's
// toolkit, mirrors and settings and nothing else of the parent's request.
BuildRequest dependency_build_request(const BuildIntent& parent, const std::string& name, const ArchList& archs,
                                      const std::string& pinned);

// "2.9.1+cu130.sm90" -> "2.9.1" (what a pin compares).
std::string public_version(const std::string& version);

}  // namespace archbuild
