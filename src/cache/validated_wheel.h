#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace archbuild {

// What a build's report keeps of one wheel's validation: the facts the cache
// and its commands read, typed (whether the device checks ran, the kernel
// census), and the whole result as validation wrote it, for people and
// `--json`. The one reader of that result's JSON is from_json.
struct ValidatedWheel {
  struct Census {
    std::string summary;                // "launched 18 of 1242 kernels of this wheel, on 1 GPU"
    std::vector<std::string> launched;  // their demangled names
    size_t launched_count = 0;
  };
  std::string wheel;  // file name
  bool device_ran = false;
  std::optional<Census> census;  // absent when no device check took one
  nlohmann::json detail;         // the validation's own JSON, with "wheel": written as is
  std::string audit;  // the wheel audit's summary: "portable as manylinux_2_28_x86_64 ...", "not portable: ..."

  nlohmann::json to_json() const { return detail; }
  // Lenient: a field that is missing or of another type keeps its default
  // (manifests written by older versions still list).
  static ValidatedWheel from_json(const nlohmann::json& json);
};

}  // namespace archbuild
