#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace archbuild {

// The environment through which a build's nvcc calls learn the asked
// targets ("sm_80,sm_90,compute_90") and where they note what they changed.
constexpr const char* kNvccTargetsVariable = "ARCHBUILD_NVCC_TARGETS";
constexpr const char* kNvccLogVariable = "ARCHBUILD_NVCC_LOG";

// Called by the step launcher for a command that runs nvcc (argv[first]
// is nvcc): rewrites its target flags to the asked ones (see
// arch/nvcc_arch_flags.h for the rule), takes target flags out of
// NVCC_APPEND_FLAGS / NVCC_PREPEND_FLAGS (setenv), and appends one JSON
// line to $ARCHBUILD_NVCC_LOG. Returns the command to exec.
std::vector<std::string> enforce_nvcc_command(const std::vector<std::string>& command, size_t nvcc_index);

// What the nvcc calls of one build did, read back from the log.
struct ArchEnforcement {
  bool enabled = false;
  size_t calls = 0, rewritten = 0, left = 0;
  struct Change {
    std::string output, before, after, reason;
  };
  std::vector<Change> changes;       // rewritten and left calls (the first 200)
  std::vector<std::string> outputs;  // every call's -o (to tell nvcc steps in .ninja_log)
  nlohmann::json to_json() const;
  // "40 nvcc calls, 12 rewritten (sm_75;sm_80 -> sm_90), 1 left as the project wrote it"
  std::string summary() const;
};
ArchEnforcement read_arch_enforcement(const std::filesystem::path& log, bool enabled);

}  // namespace archbuild
