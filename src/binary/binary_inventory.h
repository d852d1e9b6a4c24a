#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "arch/compat.h"
#include "binary/byte_view.h"
#include "binary/fatbin.h"

namespace archbuild {

using ArchCounts = std::vector<std::pair<std::string, size_t>>;

// Everything inspection learns about one binary: its fatbin containers and
// entries, or the reason it could not be read.
struct BinaryInventory {
  std::string path;     // "lib.so", or "pkg.whl!torch/lib/libtorch_cuda.so"
  std::string format;   // "shared object", "cubin", "fatbin", ...
  std::string machine;  // the host CPU of an ELF file ("x86_64", "aarch64", "cuda" for a cubin); "" for a raw fatbin
  size_t containers = 0;
  std::vector<FatbinEntry> entries;
  std::vector<FatbinContainer> container_ranges;
  std::optional<std::string> error;  // set when the file could not be parsed

  bool has_cuda_code() const { return !entries.empty(); }
  // What the CUDA runtime loads: the executable fatbin (.nv_fatbin) when the
  // file has one, else the relocatable one (__nv_relfatbin, as in -rdc
  // objects). A linked library's __nv_relfatbin is device-link input, not
  // loaded. cuobjdump makes the same choice unless given -all.
  bool is_loadable(const FatbinEntry& entry) const;
  // The images the driver would load: executable fatbin containers, or the
  // whole file for a cubin or a raw fatbin.
  std::vector<FatbinContainer> loadable_images() const;
  // {{"sm_80", 444}, {"sm_90a", 4}, {"sm_100", 444}}: loadable entries, in arch order
  ArchCounts sass_counts() const;
  ArchCounts ptx_counts() const;
  // Every entry, device-link input included (cuobjdump -all).
  ArchCounts all_sass_counts() const;
  ArchCounts all_ptx_counts() const;
  // The compression methods that occur, e.g. {"zstd"}.
  std::vector<std::string> compressions() const;
  // Can a device of this CC run something loadable from this file?
  RunVerdict verdict_for(ComputeCapability device) const;
};

// Is this worth inspecting: an ELF file, a fatbin, or a cubin?
bool looks_like_binary(std::span<const uint8_t> first_bytes);

// Inspects bytes in memory (a mapped file or a wheel member). Never throws for
// malformed input: the error lands in `error`, with the offset.
// `verify_cubins` also decompresses every SASS entry and checks that its ELF
// header names the same arch as the entry header.
BinaryInventory inspect_bytes(const std::string& path, const ByteView& bytes, bool verify_cubins = false);

}  // namespace archbuild
