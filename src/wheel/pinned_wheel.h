#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace archbuild {

// A wheel file named with its sha256, as a build records a dependency it was
// built against ("torch-2.9.1+cu130.sm90-cp312-cp312-linux_x86_64.whl sha256
// HEX"): written into the cache key by the dependency env, read back by the
// provenance, which lists it as a resolved dependency.
struct PinnedWheel {
  std::string file;
  std::string sha256;  // 64 hex digits

  std::string text() const;
  // nullopt for any other value (an installed torch, described in words).
  static std::optional<PinnedWheel> parse(std::string_view text);
};

}  // namespace archbuild
