#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "arch/arch_target.h"

namespace archbuild {

// What archbuild writes into every wheel it publishes, as
// `<name>-<version>.dist-info/archbuild.json`: the recipe, the arch list (in
// the recipe's dialect and as targets), the toolkit and the cache key with
// its inputs. It travels with the wheel (pip installs it with the package),
// so an extension build against that wheel, or an installed copy of it, can
// take its arch list without being told.
struct BuildRecord {
  static constexpr const char* kFileName = "archbuild.json";
  static constexpr int kFormat = 1;

  std::string recipe;                             // "torch"
  std::string version;                            // the labelled version, "2.9.1+cu130.sm90"
  std::string arch_list;                          // as the build read it: "9.0" (TORCH_CUDA_ARCH_LIST)
  ArchList targets;                               // stored canonical: "9.0+PTX"
  std::string cuda;                               // "13.0.88"
  std::string key;                                // the cache key's sha256
  std::map<std::string, std::string> key_inputs;  // the key's `key value` lines

  nlohmann::json to_json() const;
  // Throws UserError(bad_input) naming `origin` when the JSON is not a record.
  static BuildRecord from_json(const nlohmann::json& json, const std::string& origin);
};

// The record inside a wheel file, or nullopt when it has none (a wheel that
// archbuild did not build). Throws UserError(bad_input) naming the wheel when
// the record is there but unreadable.
std::optional<BuildRecord> read_build_record(const std::filesystem::path& wheel);

}  // namespace archbuild
