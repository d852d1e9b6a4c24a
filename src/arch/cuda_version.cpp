#include "arch/cuda_version.h"

#include <charconv>

namespace archbuild {

std::optional<CudaVersion> CudaVersion::parse(std::string_view text) {
  CudaVersion version;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [after_major, ec] = std::from_chars(begin, end, version.major);
  if (ec != std::errc() || after_major == begin) return std::nullopt;
  if (after_major == end) return version;
  if (*after_major != '.') return std::nullopt;
  auto [after_minor, ec2] = std::from_chars(after_major + 1, end, version.minor);
  if (ec2 != std::errc() || after_minor == after_major + 1) return std::nullopt;
  if (after_minor != end) {
    // allow a patch level: 13.0.88
    if (*after_minor != '.') return std::nullopt;
    int patch = 0;
    auto [after_patch, ec3] = std::from_chars(after_minor + 1, end, patch);
    if (ec3 != std::errc() || after_patch != end) return std::nullopt;
  }
  if (version.major <= 0 || version.minor < 0) return std::nullopt;
  return version;
}

}  // namespace archbuild
