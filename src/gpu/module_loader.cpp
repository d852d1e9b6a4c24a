#include "gpu/module_loader.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "binary/binary_walker.h"
#include "core/exit_code.h"
#include "core/json_text.h"
#include "gpu/driver_api.h"

namespace archbuild {

size_t ModuleLoadReport::failed() const {
  size_t count = unreadable.size();
  for (const auto& load : loads) count += !load.ok();
  return count;
}

nlohmann::json ModuleLoadReport::to_json() const {
  auto list = nlohmann::json::array();
  for (const auto& load : loads)
    list.push_back({{"file", load.file}, {"offset", load.offset}, {"device", load.device}, {"status", load.status}});
  return {{"devices", devices},
          {"loads", list},
          {"unreadable", unreadable},
          {"skipped", skipped},
          {"unavailable_reason", unavailable_reason},
          {"failed", failed()}};
}

ModuleLoadReport ModuleLoadReport::from_json(const nlohmann::json& json) {
  ModuleLoadReport report;
  report.devices = json.value("devices", std::vector<std::string>{});
  report.unreadable = json.value("unreadable", std::vector<std::string>{});
  report.unavailable_reason = json.value("unavailable_reason", "");
  report.skipped = json.value("skipped", size_t{0});
  for (const auto& load : json.value("loads", nlohmann::json::array()))
    report.loads.push_back(
        {load.value("file", ""), load.value("offset", uint64_t{0}), load.value("device", 0), load.value("status", "")});
  return report;
}

ModuleLoadReport ModuleLoadReport::merged(const std::vector<ModuleLoadReport>& shards) {
  ModuleLoadReport all;
  for (size_t i = 0; i < shards.size(); ++i) {
    const auto& shard = shards[i];
    if (all.devices.empty()) all.devices = shard.devices;
    if (all.unavailable_reason.empty()) all.unavailable_reason = shard.unavailable_reason;
    all.loads.insert(all.loads.end(), shard.loads.begin(), shard.loads.end());
    if (i == 0) all.unreadable = shard.unreadable;
    all.skipped += shard.skipped;
  }
  return all;
}

std::optional<LoadShard> LoadShard::parse(const std::string& text) {
  const auto slash = text.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == text.size()) return std::nullopt;
  const auto digits = [](const std::string& part) {
    return part.size() <= 4 && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  const auto index = text.substr(0, slash), count = text.substr(slash + 1);
  if (!digits(index) || !digits(count)) return std::nullopt;
  LoadShard shard{std::stoul(index), std::stoul(count)};
  if (shard.count == 0 || shard.index >= shard.count) return std::nullopt;
  return shard;
}

namespace {
bool has_ptx_for(const BinaryInventory& inventory, const FatbinContainer& container, ComputeCapability device) {
  for (const auto& entry : inventory.entries)
    if (entry.header_offset >= container.offset && entry.header_offset < container.offset + container.size &&
        entry.image.kind == KernelImage::Kind::ptx && can_run(entry.image, device) == RunVerdict::ptx_jit)
      return true;
  return false;
}
}  // namespace

ModuleLoadReport load_fatbins_on_devices(const std::vector<std::filesystem::path>& paths, LoadShard shard) {
  ModuleLoadReport report;
  auto api = DriverApi::load(report.unavailable_reason);
  if (!api) return report;
  if (!api->primary_ctx_retain || !api->ctx_set_current || !api->module_load_data || !api->module_unload) {
    report.unavailable_reason = "libcuda.so.1 lacks the module API";
    return report;
  }
  if (auto status = api->init(0); status != CUDA_SUCCESS) {
    report.unavailable_reason = "cuInit failed: " + api->error_name(status);
    return report;
  }
  int count = 0;
  api->device_get_count(&count);
  std::vector<std::pair<CUdevice, CUcontext>> contexts;
  std::vector<ComputeCapability> ccs;
  // With the JIT forced, a container without PTX for the GPU cannot load by
  // design: those are skipped (and counted), not failed.
  const char* force = std::getenv("CUDA_FORCE_PTX_JIT");
  const bool forced_jit = force && std::string(force) == "1";
  for (int i = 0; i < count; ++i) {
    CUdevice device;
    CUcontext context;
    if (api->device_get(&device, i) != CUDA_SUCCESS || api->primary_ctx_retain(&context, device) != CUDA_SUCCESS)
      continue;
    char name[256] = {};
    int major = 0, minor = 0;
    api->device_get_name(name, sizeof name, device);
    api->device_get_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
    api->device_get_attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
    report.devices.push_back(std::to_string(i) + ": " + name + " (" + std::to_string(major) + "." +
                             std::to_string(minor) + ")");
    contexts.emplace_back(device, context);
    ccs.push_back({major, minor});
  }
  if (contexts.empty()) {
    report.unavailable_reason = "the driver sees no usable CUDA device";
    return report;
  }
  WalkOptions options;
  size_t container = 0;  // counted in walk order, the same in every shard
  options.with_bytes = [&](const BinaryInventory& inventory, const ByteView& bytes) {
    if (inventory.error || !inventory.has_cuda_code()) return;
    for (const auto& image : inventory.loadable_images()) {
      if (!shard.takes(container++)) continue;
      auto data = bytes.copy(image.offset, image.size, "fatbin container");
      for (size_t d = 0; d < contexts.size(); ++d) {
        if (forced_jit && !has_ptx_for(inventory, image, ccs[d])) {
          ++report.skipped;
          continue;
        }
        api->ctx_set_current(contexts[d].second);
        CUmodule module = nullptr;
        auto status = api->module_load_data(&module, data.data());
        if (status == CUDA_SUCCESS) api->module_unload(module);
        report.loads.push_back({inventory.path, image.offset, static_cast<int>(d), api->error_name(status)});
      }
    }
  };
  for (const auto& path : paths)
    walk_binaries(path, options, [&](const BinaryInventory& inventory) {
      if (inventory.error) report.unreadable.push_back(inventory.path + ": " + *inventory.error);
    });
  for (const auto& [device, context] : contexts)
    if (api->primary_ctx_release) api->primary_ctx_release(device);
  return report;
}

int run_load_fatbins_command(int argc, char** argv) {
  std::vector<std::string> args(argv + 2, argv + argc);
  LoadShard shard;
  if (args.size() >= 2 && args[0] == kLoadShardOption) {
    const auto parsed = LoadShard::parse(args[1]);
    if (!parsed) {
      std::cerr << "archbuild: " << kLoadFatbinsCommand << " " << kLoadShardOption << " '" << args[1]
                << "': expected INDEX/COUNT with INDEX < COUNT\n";
      return to_int(ExitCode::bad_input);
    }
    shard = *parsed;
    args.erase(args.begin(), args.begin() + 2);
  }
  std::vector<std::filesystem::path> paths(args.begin(), args.end());
  auto report = load_fatbins_on_devices(paths, shard);
  std::cout << json_text(report.to_json(), -1) << "\n";
  if (report.devices.empty()) return to_int(ExitCode::environment);
  return report.failed() ? to_int(ExitCode::work_failed) : to_int(ExitCode::success);
}

}  // namespace archbuild
