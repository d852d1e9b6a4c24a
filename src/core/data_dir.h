#pragma once

#include <filesystem>

namespace archbuild {

// Where archbuild's data (toolchains/, recipes/, patches/) lives:
// $ARCHBUILD_DATA_DIR, else <prefix>/share/archbuild next to an installed
// binary, else the source tree the binary was built from.
std::filesystem::path data_dir();

}  // namespace archbuild
