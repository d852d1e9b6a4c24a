#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "arch/compute_capability.h"

namespace archbuild {

// Which of a wheel's own kernels the device checks launched. The wheel's
// kernels come from its fatbins (binary/kernel_names.h); the launches from
// archbuild's launch recorder, a CUDA injection library loaded into every
// process of the checks (src/launch_recorder/launch_recorder.cpp).
struct KernelCensus {
  bool recorded = false;              // the recorder ran in at least one check's process
  std::string not_recorded;           // why not, when !recorded
  size_t wheel_kernels = 0;           // distinct kernels in the images the GPUs run
  std::vector<std::string> launched;  // of those, the ones that launched (mangled, sorted)
  std::set<int> devices;              // device ordinals (the checks' view) they launched on
  size_t other_kernels = 0;           // launched kernels not in the wheel (torch's own, ...)
  bool unreadable = false;            // an image of the wheel could not be read: its kernels are unknown

  bool any_launched() const { return !launched.empty(); }
  // "launched 12 of 40 kernels of this wheel, on 1 GPU", or why nothing was counted.
  std::string summary() const;
  nlohmann::json to_json() const;  // names demangled beside the mangled ones
};

// What the recorder wrote into its directory: per kernel, the devices it
// launched on; and whether any process recorded, or why none could.
struct LaunchRecords {
  bool recorded = false;
  std::string not_recorded;
  std::map<std::string, std::set<int>> launched;
};
// Reads every launches-PID.tsv in `dir` (at most 64 MiB each; bad lines are skipped).
LaunchRecords read_launch_records(const std::filesystem::path& dir);

KernelCensus take_census(const std::set<std::string>& wheel_kernels, const LaunchRecords& records);

// The kernels of `wheel` in the images the driver would pick on these GPUs
// (SASS that runs natively on one, and PTX when `with_ptx`). Read from the
// zip without unpacking; unreadable images are skipped (the static checks
// report them).
// `unreadable` is set when an image could not be read (its kernels are then unknown).
std::set<std::string> wheel_kernels_for(const std::filesystem::path& wheel, const std::vector<ComputeCapability>& gpus,
                                        bool with_ptx, bool& unreadable);

// The environment that loads the recorder into a check's processes, writing
// into `dir`; empty when archbuild's recorder library is missing (`why` says so).
std::map<std::string, std::optional<std::string>> launch_recorder_env(const std::filesystem::path& dir,
                                                                      const std::string& python, std::string& why);

// libarchbuild_launch_recorder.so beside archbuild's executable (or in
// ../lib/archbuild); empty when absent.
std::filesystem::path launch_recorder_library();

// A libcupti for the recorder: beside the interpreter's own NVIDIA wheels
// (nvidia/cu13/lib, nvidia/cuda_cupti/lib), then the toolkit's extras/CUPTI.
// Empty when none is found (the recorder then asks the loader).
std::filesystem::path find_cupti_library(const std::string& python);

}  // namespace archbuild
