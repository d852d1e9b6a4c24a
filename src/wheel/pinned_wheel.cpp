#include "wheel/pinned_wheel.h"

#include <algorithm>
#include <cctype>

namespace archbuild {

namespace {
constexpr std::string_view kSeparator = " sha256 ";
}

std::string PinnedWheel::text() const { return file + std::string(kSeparator) + sha256; }

std::optional<PinnedWheel> PinnedWheel::parse(std::string_view text) {
  const auto at = text.rfind(kSeparator);
  if (at == std::string_view::npos || at == 0) return std::nullopt;
  const auto digest = text.substr(at + kSeparator.size());
  if (digest.size() != 64 ||
      !std::all_of(digest.begin(), digest.end(), [](unsigned char c) { return std::isxdigit(c) != 0; }))
    return std::nullopt;
  return PinnedWheel{std::string(text.substr(0, at)), std::string(digest)};
}

}  // namespace archbuild
