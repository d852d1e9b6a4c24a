#pragma once

#include <filesystem>
#include <functional>

#include "binary/binary_inventory.h"

namespace archbuild {

struct WalkOptions {
  bool verify_cubins = false;
  // When set, called for each binary with its bytes, which are valid only
  // during the call (the fatbin loader reads its containers from them).
  std::function<void(const BinaryInventory&, const ByteView&)> with_bytes;
};

struct WalkStats {
  size_t files_seen = 0;  // regular files looked at (magic read)
  size_t binaries = 0;    // ELF / fatbin / cubin inspected
  size_t with_cuda_code = 0;
  size_t unreadable = 0;  // inventories with an error
};

// Inspects `path`: an ELF file, cubin or fatbin; a wheel (members read
// straight from the zip, never unpacked to disk); or a directory, walked
// recursively (symlinks are not followed, so lib.so -> lib.so.1 counts once).
// `sink` receives each binary's inventory; in directories and wheels, files
// that are neither ELF nor fatbin are skipped, while a named file of another
// kind, or one that is missing, is reported with an error.
WalkStats walk_binaries(const std::filesystem::path& path, const WalkOptions& options,
                        const std::function<void(const BinaryInventory&)>& sink);

bool is_zip_file(const std::filesystem::path& path);

}  // namespace archbuild
