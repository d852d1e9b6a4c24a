#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "arch/compute_capability.h"
#include "binary/byte_view.h"

namespace archbuild {

constexpr uint16_t kElfMachineCuda = 190;  // EM_CUDA: a cubin

struct ElfSection {
  std::string name;
  uint32_t type = 0;
  uint64_t offset = 0;  // in the file
  uint64_t size = 0;
  uint32_t link = 0;  // sh_link: for a symbol table, the index of its string table
};

// The parts of an ELF64 little-endian file that inspection needs.
struct ElfFile {
  uint16_t type = 0;  // ET_REL 1, ET_EXEC 2, ET_DYN 3
  uint16_t machine = 0;
  uint8_t abi_version = 0;
  uint32_t flags = 0;
  std::vector<ElfSection> sections;

  const ElfSection* find(const std::string& name) const;
  // "shared object", "executable", "relocatable object", "cubin"
  std::string kind() const;
  // The CPU the file is for, as wheel platform tags spell it: "x86_64",
  // "aarch64", "ppc64le"; "cuda" for a cubin; "e_machine N" otherwise.
  std::string machine_name() const;
};

bool has_elf_magic(std::span<const uint8_t> bytes);

// A string table (section names, symbol or dynamic names), read whole: each
// name is the NUL-terminated run of bytes at its offset.
class ElfStrings {
 public:
  explicit ElfStrings(std::vector<uint8_t> bytes) : bytes_(std::move(bytes)) {}
  // The name at `offset`; nullopt when the offset lies outside the table.
  std::optional<std::string> at(uint64_t offset) const;

 private:
  std::vector<uint8_t> bytes_;
};

// The string table at [offset, offset + size), `what` naming it in a
// ParseError: no name table comes near 64 MiB, so a larger one is corrupt.
ElfStrings read_strings(const ByteView& view, uint64_t offset, uint64_t size, const char* what);

// Reads the header and section table; throws ParseError (offset + reason).
ElfFile read_elf(const ByteView& view);

// The string table a symbol table or .dynamic names in its sh_link; throws
// ParseError when that index does not exist.
ElfStrings linked_strings(const ByteView& view, const ElfFile& elf, const ElfSection& section, const char* what);

// The SASS arch a cubin was built for, from e_flags: the layout changed with
// EI_ABIVERSION 8 (all CUDA 13 cubins). The a/f variant is not recorded there.
std::optional<ComputeCapability> cubin_arch(const ElfFile& elf);

// The sonames a shared object or executable needs (DT_NEEDED of its
// .dynamic section, in order); empty without one. Throws ParseError.
std::vector<std::string> elf_needed_libraries(const ByteView& view, const ElfFile& elf);

}  // namespace archbuild
