#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cache/validated_wheel.h"

namespace archbuild {

// How far a published wheel was validated; each level proves what the one
// before it does, and more.
enum class ValidationLevel {
  none,         // --no-validate
  static_only,  // fatbins and RECORD checked, no GPU (or none the targets serve)
  loaded,       // also loaded by the driver on a GPU, but no kernel of the wheel was seen to launch
  launched,     // its own kernels launched there without a CUDA error
  checked,      // and their results agreed with a CPU or reference result (op exerciser, kernel test)
};
std::string to_string(ValidationLevel level);  // "none", "static", "loaded", "launched", "checked"
// Also reads "device", what older manifests call `launched`.
std::optional<ValidationLevel> parse_validation_level(const std::string& text);

// How far validation proved a build: no device check ran -> static; the
// wheels loaded on the device -> loaded; their own kernels launched ->
// launched; and their results were compared with a reference -> checked.
ValidationLevel proven_level(bool device_ran, bool kernels_launched, bool results_compared = false);

struct ReportedWheel {
  std::string file;
  std::filesystem::path path;
  std::string sha256;
  uint64_t size = 0;
  static ReportedWheel of(const std::filesystem::path& wheel);  // hashes the file
};

// What a build (or a cache hit) leaves behind: <out>/report.json, the store
// entry's manifest.json, and `build --json`'s output. One type, written and
// read only through to_json / from_json.
struct BuildReport {
  bool cache_hit = false;
  std::string key;                         // the cache key's hash
  nlohmann::json plan;                     // BuildPlan::to_json
  nlohmann::json source;                   // SourceTree::to_json
  nlohmann::json build;                    // BuildResult::to_json (absent on a cache hit)
  bool validated = false;                  // false: --no-validate
  std::vector<ValidatedWheel> validation;  // per wheel
  ValidationLevel validation_level = ValidationLevel::none;
  std::string validation_scope;  // the same, as a sentence for people
  std::vector<ReportedWheel> wheels;
  std::string local_version_label;                  // "cu130.sm90"
  std::optional<std::filesystem::path> quarantine;  // where a wheel that failed validation was kept
  std::string published_at;                         // UTC, ISO 8601
  std::optional<std::filesystem::path> store;       // the store entry
  std::optional<std::filesystem::path> index;       // the PEP 503 index dir
  std::vector<std::string> install;                 // how to install what was published
  bool published = false;
  // Switches archbuild set because the project built no CUDA code without
  // them (NAME -> value, outermost first); they are --env values, in the key.
  std::vector<std::pair<std::string, std::string>> cuda_switches_set;
  // The portable setting's repair, one WheelRepair::to_json per built wheel (empty: not asked).
  nlohmann::json repair = nlohmann::json::array();

  nlohmann::json to_json() const;
  // One wheel's kernel census as its device check recorded it.
  using KernelCensus = ValidatedWheel::Census;
  std::vector<KernelCensus> kernel_censuses() const;
  // The wheels' kernel census lines, "; "-joined ("" when none was taken).
  std::string kernel_census_summary() const;
  // The wheels' audit summaries, joined: which libraries a node needs besides them.
  std::string audit_summary() const;
  // Kernels of the wheels that launched in validation, summed (the index's metadata carries it).
  std::optional<size_t> kernels_launched() const;
  // Lenient: a field that is missing or of another type keeps its default
  // (manifests written by older versions still list).
  static BuildReport from_json(const nlohmann::json& json);
};

}  // namespace archbuild
