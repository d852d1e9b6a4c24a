#pragma once

#include <compare>
#include <optional>
#include <string>
#include <string_view>

namespace archbuild {

// A device's compute capability, e.g. 9.0 (Hopper) or 12.0 (Blackwell RTX).
struct ComputeCapability {
  int major = 0;
  int minor = 0;

  auto operator<=>(const ComputeCapability&) const = default;

  // "9.0"
  std::string dotted() const;
  // 90, as used in sm_90 / compute_90
  int number() const { return major * 10 + minor; }

  // "9.0" / "12.1": one or two digits, a dot, one digit.
  static std::optional<ComputeCapability> parse_dotted(std::string_view text);
  // "90" / "120": the sm_XY spelling, the last digit is the minor.
  static std::optional<ComputeCapability> parse_digits(std::string_view text);
  // Either spelling.
  static std::optional<ComputeCapability> parse(std::string_view text);
};

// Tegra/Jetson parts run only code built for exactly their CC, and their
// code runs nowhere else (docs/CUDA_FACTS.md#tegra).
bool is_tegra_only(ComputeCapability cc);

}  // namespace archbuild
