#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "validate/test_dependencies.h"
#include "validate/wheel_audit.h"
#include "validate/wheel_dependencies.h"

namespace archbuild {

// The minimal root of the clean room (recipes/frontends/clean_room.py
// `layout` says what goes in): read-only binds, the one directory every
// library is found in, and the GPU's device nodes.
struct CleanRoomLayout {
  std::string python;                                                             // the venv's interpreter
  std::filesystem::path lib_dir;                                                  // LD_LIBRARY_PATH inside
  std::vector<std::pair<std::filesystem::path, std::filesystem::path>> binds;     // source, where it appears
  std::vector<std::pair<std::filesystem::path, std::filesystem::path>> writable;  // the probe's answer
  std::vector<std::filesystem::path> devices;                                     // /dev/nvidia*, with a GPU
  std::vector<std::string> missing_system;  // policy libraries this machine lacks (a node may have them)
  // Throws UserError(environment) naming what is wrong with the frontend's answer.
  static CleanRoomLayout from_json(const std::string& text);
};

// bubblewrap's command line: no network, no other namespace shared, an
// empty environment but PATH, HOME, LD_LIBRARY_PATH and `env`, a tmpfs root
// and /tmp, the layout's binds (read-only) and devices, then `command`.
std::vector<std::string> bubblewrap_argv(const std::filesystem::path& bwrap, const CleanRoomLayout& layout,
                                         const std::vector<std::pair<std::string, std::string>>& env,
                                         const std::vector<std::string>& command);

struct CleanRoomRequest {
  std::filesystem::path wheel;
  std::string python;                 // the validating interpreter: torch and its dependency wheels
  std::filesystem::path tool_path;    // auditwheel (its ELF reader), for the layout
  const WheelAudit* audit = nullptr;  // the policy's system libraries; what torch, CUDA, the driver give
  std::vector<std::string> modules;   // the wheel's top-level modules to import
  std::filesystem::path work_dir;     // its venv and logs
  bool gpu = false;                   // the driver and the GPU's devices too; the kernel test runs inside
  std::string visible_devices;        // CUDA_VISIBLE_DEVICES inside: the GPUs the targets serve ("" all)
  std::filesystem::path kernel_test;  // the recipe's, run with `modules` as its arguments
  TestDependencySource dependencies;  // where the wheel's own dependencies come from, as on a node
};

// The wheel installed and tried where only what a node has is: every ELF
// file of it loaded, its modules imported, its kernel test run on a GPU.
struct CleanRoom {
  bool ran = false;
  std::string skipped_reason;         // why not, when !ran (no bubblewrap, no user namespaces)
  std::vector<std::string> failures;  // "demo/libdemo.so: libzstd.so.1: cannot open shared object file ..."
  bool environment = false;           // the failures are this machine's (its torch, a venv), not the wheel's
  size_t loaded = 0;                  // ELF files that loaded
  std::vector<std::string> imported;  // modules that imported
  std::string torch;                  // the torch version inside ("" when none)
  bool kernel_test_ran = false;
  WheelDependencies dependencies;  // installed into its venv before it is entered
  double seconds = 0;
  std::filesystem::path log;
  bool ok() const { return ran && failures.empty(); }
  // "loaded 3 ELF files and imported demo with only what a node has (torch 2.11.0)", "FAILED: ...", "skipped: ..."
  std::string summary() const;
  nlohmann::json to_json() const;
};

// Never throws. Skipped, saying why, only where bubblewrap is missing or
// cannot make a sandbox here; anything else that goes wrong is a failure
// (`environment` when it is this machine's), and what fails inside names
// the file and the loader's message.
CleanRoom run_clean_room(const CleanRoomRequest& request);

}  // namespace archbuild
