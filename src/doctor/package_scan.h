#pragma once

#include <string>
#include <vector>

#include "binary/binary_inventory.h"

namespace archbuild {

// The CUDA binaries of one installed package (a top-level dir of site-packages;
// for namespace packages such as nvidia/, one level deeper: nvidia/cublas).
struct PackageBinaries {
  std::string name;                    // "torch", "torchvision", "nvidia/cublas"
  std::string site_dir;                // the sys.path dir it was found in
  std::vector<BinaryInventory> files;  // only files with CUDA code or read errors
};

// Walks each dir and groups the CUDA binaries by package, in the order found.
std::vector<PackageBinaries> scan_packages(const std::vector<std::string>& site_dirs);

// The package a path below `site_dir` belongs to (exposed for tests).
std::string package_name_for(const std::string& site_dir, const std::string& path);

}  // namespace archbuild
