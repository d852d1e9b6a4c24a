#include "core/private_dir.h"

#include <stdlib.h>

#include "core/error.h"

namespace archbuild {

std::filesystem::path make_private_dir(const std::filesystem::path& parent, const std::string& prefix) {
  auto pattern = (parent / (prefix + "-XXXXXX")).string();
  if (!::mkdtemp(pattern.data())) fail_environment("cannot create a temporary dir like " + pattern);
  return pattern;
}

PrivateDir::~PrivateDir() {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

}  // namespace archbuild
