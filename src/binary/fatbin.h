#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "arch/compat.h"
#include "binary/byte_view.h"

namespace archbuild {

constexpr uint32_t kFatbinMagic = 0xBA55ED50;

enum class Compression { none, lz4, zstd };
std::string to_string(Compression compression);

// One image inside a fatbin container (docs/CUDA_FACTS.md#fatbin has the layout).
struct FatbinEntry {
  KernelImage image;
  Compression compression = Compression::none;
  uint64_t header_offset = 0;  // in the scanned bytes
  uint32_t header_size = 0;
  uint64_t payload_size = 0;     // padded, as stored
  uint64_t compressed_size = 0;  // 0 when not compressed
  uint64_t uncompressed_size = 0;
  std::string section;  // ".nv_fatbin", "__nv_relfatbin", or "" for a raw fatbin
};

// Where one container lies in the scanned bytes: what cuModuleLoadData takes.
struct FatbinContainer {
  uint64_t offset = 0;
  uint64_t size = 0;    // header included
  std::string section;  // as in FatbinEntry
};

struct FatbinScan {
  size_t containers = 0;
  std::vector<FatbinContainer> container_ranges;
  std::vector<FatbinEntry> entries;
};

bool has_fatbin_magic(std::span<const uint8_t> bytes);

// Walks the containers stored back to back in bytes[start, start+size),
// reading headers only. Throws ParseError with the offset of a bad header.
void scan_fatbin_region(const ByteView& view, uint64_t start, uint64_t size, const std::string& section,
                        FatbinScan& out);

// The entry's payload, decompressed if needed (LZ4 block or zstd frame).
// Throws ParseError when the payload is corrupt.
std::vector<uint8_t> entry_payload(const ByteView& view, const FatbinEntry& entry);

}  // namespace archbuild
