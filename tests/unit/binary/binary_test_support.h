// Helpers shared by the tests of fatbin and elf_file: hand-made cubins, inspected from memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "binary/binary_inventory.h"
#include "binary/byte_view.h"
#include "binary/elf_file.h"

namespace archbuild {

template <typename T>
void put(std::vector<uint8_t>& out, size_t at, T value) {
  if (out.size() < at + sizeof value) out.resize(at + sizeof value);
  std::memcpy(out.data() + at, &value, sizeof value);
}

// A minimal cubin: an ELF64 header with EM_CUDA and the CUDA 13 e_flags layout.
inline std::vector<uint8_t> fake_cubin(unsigned sm) {
  std::vector<uint8_t> elf(64, 0);
  const uint8_t ident[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0x41, 8};
  std::memcpy(elf.data(), ident, sizeof ident);
  put<uint16_t>(elf, 16, 2);
  put<uint16_t>(elf, 18, kElfMachineCuda);
  put<uint32_t>(elf, 48, 0x6000002u | (sm << 8));
  put<uint16_t>(elf, 58, 64);
  elf.resize(256, 0xAB);  // some "code"
  return elf;
}

inline BinaryInventory inspect(const std::vector<uint8_t>& bytes, bool verify = false) {
  return inspect_bytes("test", ByteView(bytes), verify);
}

}  // namespace archbuild
