#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace archbuild {

// One fatbin container (or cubin) handed to cuModuleLoadData on one GPU.
struct ModuleLoad {
  std::string file;     // "pkg.whl!pkg/lib.so"
  uint64_t offset = 0;  // of the container in the file
  int device = 0;
  std::string status;  // "CUDA_SUCCESS", "CUDA_ERROR_NO_BINARY_FOR_GPU", ...
  bool ok() const { return status == "CUDA_SUCCESS"; }
};

struct ModuleLoadReport {
  std::vector<std::string> devices;  // "0: NVIDIA H200 (9.0)"
  std::vector<ModuleLoad> loads;
  std::vector<std::string> unreadable;
  size_t skipped = 0;              // containers without PTX for the GPU, under CUDA_FORCE_PTX_JIT=1
  std::string unavailable_reason;  // set when no device could be used
  size_t failed() const;
  nlohmann::json to_json() const;
  static ModuleLoadReport from_json(const nlohmann::json& json);
  // The reports of a wheel's shards as one (unreadable files once: every shard walks them all).
  static ModuleLoadReport merged(const std::vector<ModuleLoadReport>& shards);
};

// Which of the containers one loader process takes: every `count`-th,
// from the `index`-th on (the forced PTX JIT is spread over processes, each
// with its own context, so the machine's cores compile at once).
struct LoadShard {
  size_t index = 0;
  size_t count = 1;
  bool takes(size_t container) const { return container % count == index; }
  // "2/8" -> {2, 8}; nullopt when malformed or index >= count.
  static std::optional<LoadShard> parse(const std::string& text);
  std::string str() const { return std::to_string(index) + "/" + std::to_string(count); }
};

// Loads every executable fatbin container of every CUDA binary under
// `paths` (files, wheels, directories) through the driver API, on every
// visible GPU, and unloads it again. The environment decides what counts:
// with CUDA_DISABLE_PTX_JIT=1 only native SASS loads, with
// CUDA_FORCE_PTX_JIT=1 only PTX does. Runs in a child process of archbuild
// (`archbuild _load-fatbins`), so a driver crash cannot take the build down.
ModuleLoadReport load_fatbins_on_devices(const std::vector<std::filesystem::path>& paths, LoadShard shard = {});

constexpr const char* kLoadFatbinsCommand = "_load-fatbins";
constexpr const char* kLoadShardOption = "--shard";
// `archbuild _load-fatbins [--shard I/N] PATH...`: the report as JSON on
// stdout; exit 0 all loaded, 1 some failed, 2 a bad shard, 3 no GPU.
int run_load_fatbins_command(int argc, char** argv);

}  // namespace archbuild
