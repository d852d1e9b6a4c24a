// Helpers shared by unit tests of several folders.
#pragma once

#include "toolchain/toolkit_facts.h"

namespace archbuild {

// The toolkit table shipped in toolchains/.
inline ToolkitTable table() { return ToolkitTable::load(ARCHBUILD_SOURCE_DIR "/toolchains"); }

}  // namespace archbuild
