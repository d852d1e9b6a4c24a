#include "core/nonce.h"

#include <cstdio>
#include <random>

namespace archbuild {

std::string random_nonce() {
  std::random_device random;
  char text[17];
  std::snprintf(text, sizeof text, "%08x%08x", static_cast<unsigned>(random()), static_cast<unsigned>(random()));
  return text;
}

}  // namespace archbuild
