#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "builder/build_history.h"
#include "builder/build_requirements.h"
#include "builder/system_libraries.h"
#include "cluster/compile_cluster.h"
#include "core/system_info.h"
#include "toolchain/cxx_runtime_link.h"

namespace archbuild {

// What a build plan depends on besides the user's request and the recipe:
// the caller's environment, this machine, the interpreter, and what an
// earlier build left in the work tree. Gathered in one place (reading files
// and running the interpreter), so that make_plan is a pure function.
struct PlanFacts {
  std::string path;                // the caller's $PATH
  std::string pythonpath;          // the caller's $PYTHONPATH, "" when unset
  std::string cxx;                 // the caller's $CXX, "" when unset
  std::string ldflags;             // the caller's $LDFLAGS, "" when unset
  std::string self_executable;     // archbuild itself: the step launcher
  std::filesystem::path data_dir;  // recipes/frontends/ and the like ({archbuild_data})
  std::string python_tag;          // cp311, from the build's interpreter
  // The host CPU (uname): the wheel's platform, in the key where not x86-64.
  // This host's unless a test says otherwise: the cache's dependency lookup
  // asks host_machine() too, and the two must agree.
  std::string machine = host_machine();
  unsigned cores = 1;
  uint64_t available_memory_bytes = 0;
  size_t cuda_files = 0;            // .cu files in the source (0: not checked out yet)
  bool one_file_at_a_time = false;  // setup.py turns cpp_extension's ninja off
  // The configure inputs the last build in this work tree recorded, if any.
  std::optional<std::map<std::string, std::string>> recorded_configure_inputs;
  bool has_cmake_build_dir = false;                       // a CMakeCache.txt within 4 levels
  std::vector<std::filesystem::path> setuptools_outputs;  // build/lib.*, build/temp.*, build/bdist.*
  std::map<std::string, FoundLibrary> system_libraries;   // the recipe's [[system_library]] found here
  std::vector<BuildTimeRecord> build_history;             // the recipe's earlier builds in this cache
  std::vector<RequirementStatus> build_requirements;      // the build's requirements, as the interpreter has them
  std::optional<ClusterConnection> cluster;               // the compile cluster's link, once the build made it
  std::optional<CxxRuntimeLink> cxx_runtime;              // how the link compiler links libstdc++ (a build probes it)

  // The probe's result when archbuild links the shared runtime for the compiler, else null.
  const CxxRuntimeLink* cxx_runtime_remedy() const {
    return cxx_runtime && cxx_runtime->remedied() ? &*cxx_runtime : nullptr;
  }
};

// Reads the facts for a build of `source_dir` (which may not exist yet) run
// by `python`. Runs `python` once, for its tag.
PlanFacts gather_plan_facts(const std::filesystem::path& source_dir, const std::string& python);

// The configure inputs of the last successful build in `source_dir`
// (recorded in .git/archbuild-configured.json), if any.
std::optional<std::map<std::string, std::string>> recorded_configure_inputs(const std::filesystem::path& source_dir);
// `settled`: the build got past its configure with these inputs (it
// compiled, or ended on its own); until then the stamp says pending, and a
// build with the same inputs reconfigures instead of resuming.
void record_configure_inputs(const std::filesystem::path& source_dir, const std::map<std::string, std::string>& inputs,
                             bool settled = true);
inline constexpr const char* kConfigurePendingKey = "archbuild.configure_pending";

// .cu files under `dir` (skipping .git and build dirs): the compile units for nvcc --threads.
size_t count_cuda_files(const std::filesystem::path& dir);

// setuptools' own outputs under `source_dir`/build (lib.*, temp.*, bdist.*);
// not a CMake build dir that happens to be called build/.
std::vector<std::filesystem::path> setuptools_build_outputs(const std::filesystem::path& source_dir);

// Whether the project's setup.py turns torch.utils.cpp_extension's ninja off
// (`use_ninja=False`, as pytorch_scatter does): then its compiles run one at
// a time whatever MAX_JOBS says. Reads it only when it is a regular file of
// at most kMaxSetupPyBytes.
bool compiles_one_file_at_a_time(const std::filesystem::path& dir);
// Far above any real setup.py (PyTorch's is about 60 KB).
inline constexpr size_t kMaxSetupPyBytes = 1u << 20;
// `use_ninja`, optional white space, `=`, optional white space, `False`: one
// linear scan (std::regex recurses per character and overflows the stack on
// a long run of white space).
bool says_use_ninja_false(std::string_view text);

}  // namespace archbuild
