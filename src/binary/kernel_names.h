#pragma once

#include <functional>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "binary/binary_inventory.h"
#include "binary/byte_view.h"

namespace archbuild {

// The kernels (entry functions) of one image arch of a binary: "sm_90" or
// "compute_90", the mangled names as the driver launches them, sorted.
struct ArchKernels {
  std::string arch;
  std::vector<std::string> names;
};

// The kernel census of one binary: per image arch, what it can launch.
struct BinaryKernels {
  std::string path;
  std::vector<ArchKernels> archs;           // in arch order
  std::optional<std::string> error;         // an image that could not be read (the others are listed)
  std::set<std::string> all_names() const;  // over every arch
};

// Entry functions of a cubin: symbols of type FUNC with CUDA's entry flag
// (STO_CUDA_ENTRY, 0x10 in st_other), as `cuobjdump -elf` lists them.
// Throws ParseError for a malformed cubin.
std::vector<std::string> cubin_kernel_names(const ByteView& cubin);

// `.entry NAME(` declarations of PTX text.
std::vector<std::string> ptx_kernel_names(std::string_view ptx);

// Which entries to read: the runtime-loadable ones the predicate accepts
// (all of them without one). Validation reads only the archs its GPUs run.
using EntryFilter = std::function<bool(const FatbinEntry&)>;

// Reads every chosen image of `inventory` from `bytes` (decompressing as
// needed) and lists its kernels. Never throws: a bad image lands in `error`.
BinaryKernels list_kernels(const BinaryInventory& inventory, const ByteView& bytes, const EntryFilter& want = {});

// A C++ name as people read it (`void ns::scale<float>(float*, float, int)`);
// the name itself when it is not a mangled C++ name (extern "C" kernels).
std::string demangle(const std::string& name);

}  // namespace archbuild
