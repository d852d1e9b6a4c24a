#pragma once

#include <compare>
#include <optional>
#include <string>
#include <string_view>

namespace archbuild {

// A CUDA release, major.minor (13.0). The patch level is kept as text elsewhere.
struct CudaVersion {
  int major = 0;
  int minor = 0;
  auto operator<=>(const CudaVersion&) const = default;
  std::string str() const { return std::to_string(major) + "." + std::to_string(minor); }
  // "13.0", "13.0.88", "12"
  static std::optional<CudaVersion> parse(std::string_view text);
  // cuDriverGetVersion's 1000*major + 10*minor
  static CudaVersion from_driver_number(int number) { return {number / 1000, (number % 1000) / 10}; }
};

}  // namespace archbuild
