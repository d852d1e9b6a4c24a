#include "binary/elf_file.h"

#include "binary/byte_view.h"

namespace archbuild {

namespace {
constexpr uint32_t kSectionNoBits = 8;  // SHT_NOBITS: occupies no file space
constexpr uint64_t kMaxStringTable = 64 << 20;
}  // namespace

bool has_elf_magic(std::span<const uint8_t> bytes) {
  return bytes.size() >= 4 && bytes[0] == 0x7f && bytes[1] == 'E' && bytes[2] == 'L' && bytes[3] == 'F';
}

std::optional<std::string> ElfStrings::at(uint64_t offset) const {
  if (offset >= bytes_.size()) return std::nullopt;
  const auto* start = reinterpret_cast<const char*>(bytes_.data()) + offset;
  return std::string(start, strnlen(start, bytes_.size() - offset));
}

ElfStrings read_strings(const ByteView& view, uint64_t offset, uint64_t size, const char* what) {
  if (size > kMaxStringTable)
    throw ParseError(offset, std::string(what) + " of " + std::to_string(size) + " bytes is too large");
  return ElfStrings(view.copy(offset, size, what));
}

ElfStrings linked_strings(const ByteView& view, const ElfFile& elf, const ElfSection& section, const char* what) {
  if (section.link >= elf.sections.size())
    throw ParseError(section.offset, "'" + section.name + "' names string table " + std::to_string(section.link) +
                                         ", which does not exist");
  const ElfSection& strings = elf.sections[section.link];
  return read_strings(view, strings.offset, strings.size, what);
}

const ElfSection* ElfFile::find(const std::string& name) const {
  for (const auto& section : sections)
    if (section.name == name) return &section;
  return nullptr;
}

std::string ElfFile::kind() const {
  if (machine == kElfMachineCuda) return "cubin";
  switch (type) {
    case 1: return "relocatable object";
    case 2: return "executable";
    case 3: return find(".interp") ? "executable" : "shared object";  // a PIE has an interpreter
  }
  return "ELF type " + std::to_string(type);
}

std::string ElfFile::machine_name() const {
  switch (machine) {
    case 62: return "x86_64";    // EM_X86_64
    case 183: return "aarch64";  // EM_AARCH64
    case 21: return "ppc64le";   // EM_PPC64 (only little-endian files are read)
    case kElfMachineCuda: return "cuda";
  }
  return "e_machine " + std::to_string(machine);
}

ElfFile read_elf(const ByteView& view) {
  auto ident = view.copy(0, 16, "ELF identification");
  if (!has_elf_magic(ident)) throw ParseError(0, "not an ELF file (no \\x7fELF magic)");
  if (ident[4] != 2) throw ParseError(4, "not a 64-bit ELF file (EI_CLASS " + std::to_string(ident[4]) + ")");
  if (ident[5] != 1) throw ParseError(5, "not a little-endian ELF file");
  view.require(0, 64, "ELF header");

  ElfFile elf;
  elf.abi_version = ident[8];
  elf.type = view.read<uint16_t>(16, "e_type");
  elf.machine = view.read<uint16_t>(18, "e_machine");
  // e_version (offset 20) carries the toolkit version in cubins: not checked.
  elf.flags = view.read<uint32_t>(48, "e_flags");
  uint64_t section_table = view.read<uint64_t>(40, "e_shoff");
  uint16_t entry_size = view.read<uint16_t>(58, "e_shentsize");
  uint64_t count = view.read<uint16_t>(60, "e_shnum");
  uint16_t names_index = view.read<uint16_t>(62, "e_shstrndx");
  if (section_table == 0) return elf;  // no section table (stripped): nothing to find
  if (entry_size < 64) throw ParseError(58, "section header size " + std::to_string(entry_size) + " < 64");
  if (count == 0) count = view.read<uint64_t>(section_table + 32, "extended section count");
  if (count > view.size() / entry_size)
    throw ParseError(60, "section count " + std::to_string(count) + " does not fit in the file");
  view.require(section_table, count * entry_size, "section header table");

  struct Raw {
    uint32_t name;
    uint32_t type;
    uint64_t offset, size;
    uint32_t link;
  };
  std::vector<Raw> raw;
  raw.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t at = section_table + i * entry_size;
    raw.push_back({view.read<uint32_t>(at, "sh_name"), view.read<uint32_t>(at + 4, "sh_type"),
                   view.read<uint64_t>(at + 24, "sh_offset"), view.read<uint64_t>(at + 32, "sh_size"),
                   view.read<uint32_t>(at + 40, "sh_link")});
  }
  if (names_index == 0xffff) names_index = static_cast<uint16_t>(view.read<uint32_t>(section_table + 40, "sh_link"));
  if (names_index >= raw.size())
    throw ParseError(62, "section name table index " + std::to_string(names_index) + " out of range");
  const Raw& names = raw[names_index];
  const ElfStrings name_table = read_strings(view, names.offset, names.size, "section name table");

  for (uint64_t i = 0; i < raw.size(); ++i) {
    ElfSection section;
    section.name = name_table.at(raw[i].name).value_or("");
    section.type = raw[i].type;
    section.offset = raw[i].offset;
    section.size = raw[i].type == kSectionNoBits ? 0 : raw[i].size;
    section.link = raw[i].link;
    if (section.size && !view.has(section.offset, section.size))
      throw ParseError(section_table + i * entry_size, "section '" + section.name + "' lies outside the file (offset " +
                                                           std::to_string(section.offset) + ", size " +
                                                           std::to_string(section.size) + ")");
    elf.sections.push_back(std::move(section));
  }
  return elf;
}

std::optional<ComputeCapability> cubin_arch(const ElfFile& elf) {
  if (elf.machine != kElfMachineCuda) return std::nullopt;
  unsigned sm = elf.abi_version >= 8 ? (elf.flags >> 8) & 0xff : elf.flags & 0xff;
  if (sm < 10) return std::nullopt;
  return ComputeCapability{static_cast<int>(sm / 10), static_cast<int>(sm % 10)};
}

std::vector<std::string> elf_needed_libraries(const ByteView& view, const ElfFile& elf) {
  constexpr uint64_t kDtNull = 0, kDtNeeded = 1, kEntrySize = 16;
  std::vector<std::string> needed;
  const ElfSection* dynamic = elf.find(".dynamic");
  if (!dynamic || dynamic->size == 0) return needed;
  const ElfStrings table = linked_strings(view, elf, *dynamic, "dynamic string table");
  for (uint64_t at = dynamic->offset; at + kEntrySize <= dynamic->offset + dynamic->size; at += kEntrySize) {
    const auto tag = view.read<uint64_t>(at, "d_tag");
    if (tag == kDtNull) break;
    if (tag != kDtNeeded) continue;
    auto name = table.at(view.read<uint64_t>(at + 8, "d_val"));
    if (!name) throw ParseError(at + 8, "DT_NEEDED name outside the dynamic string table");
    needed.push_back(std::move(*name));
  }
  return needed;
}

}  // namespace archbuild
