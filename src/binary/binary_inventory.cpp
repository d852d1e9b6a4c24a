#include "binary/binary_inventory.h"

#include <algorithm>
#include <set>

#include "binary/byte_view.h"
#include "binary/elf_file.h"

namespace archbuild {

namespace {

// Sorts "sm_90" before "sm_100" (numeric, then variant).
struct ArchNameLess {
  static std::pair<int, std::string> key(const std::string& name) {
    auto digits_at = name.find('_') + 1;
    size_t end = digits_at;
    while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end]))) ++end;
    return {std::atoi(name.substr(digits_at, end - digits_at).c_str()), name.substr(end)};
  }
  bool operator()(const std::string& a, const std::string& b) const { return key(a) < key(b); }
};

ArchCounts count_kind(const BinaryInventory& inventory, KernelImage::Kind kind, bool loadable_only) {
  std::map<std::string, size_t, ArchNameLess> sorted;
  for (const auto& entry : inventory.entries)
    if (entry.image.kind == kind && (!loadable_only || inventory.is_loadable(entry))) ++sorted[entry.image.name()];
  return {sorted.begin(), sorted.end()};
}

constexpr const char* kRelocatableSection = "__nv_relfatbin";

void verify_cubin(const ByteView& bytes, const FatbinEntry& entry) {
  auto payload = entry_payload(bytes, entry);
  ElfFile cubin;
  try {
    cubin = read_elf(ByteView(payload));
  } catch (const ParseError& e) {
    throw ParseError(entry.header_offset, std::string("cubin of entry is not valid ELF: ") + e.what());
  }
  auto arch = cubin_arch(cubin);
  if (!arch || *arch != entry.image.cc)
    throw ParseError(entry.header_offset, "entry says " + entry.image.name() + " but its cubin says sm_" +
                                              (arch ? std::to_string(arch->number()) : std::string("?")));
}

}  // namespace

bool BinaryInventory::is_loadable(const FatbinEntry& entry) const {
  if (entry.section != kRelocatableSection) return true;
  return std::none_of(entries.begin(), entries.end(), [](const FatbinEntry& e) { return e.section == ".nv_fatbin"; });
}

std::vector<FatbinContainer> BinaryInventory::loadable_images() const {
  std::vector<FatbinContainer> images;
  for (const auto& container : container_ranges)
    if (container.section != kRelocatableSection) images.push_back(container);
  return images;
}

ArchCounts BinaryInventory::sass_counts() const { return count_kind(*this, KernelImage::Kind::sass, true); }
ArchCounts BinaryInventory::ptx_counts() const { return count_kind(*this, KernelImage::Kind::ptx, true); }
ArchCounts BinaryInventory::all_sass_counts() const { return count_kind(*this, KernelImage::Kind::sass, false); }
ArchCounts BinaryInventory::all_ptx_counts() const { return count_kind(*this, KernelImage::Kind::ptx, false); }

std::vector<std::string> BinaryInventory::compressions() const {
  std::set<std::string> found;
  for (const auto& entry : entries)
    if (entry.compression != Compression::none) found.insert(to_string(entry.compression));
  return {found.begin(), found.end()};
}

RunVerdict BinaryInventory::verdict_for(ComputeCapability device) const {
  RunVerdict best = RunVerdict::no_kernel_image;
  for (const auto& entry : entries)
    if (is_loadable(entry)) best = best_verdict(best, can_run(entry.image, device));
  return best;
}

bool looks_like_binary(std::span<const uint8_t> first_bytes) {
  return has_elf_magic(first_bytes) || has_fatbin_magic(first_bytes);
}

BinaryInventory inspect_bytes(const std::string& path, const ByteView& bytes, bool verify_cubins) {
  BinaryInventory inventory;
  inventory.path = path;
  try {
    FatbinScan scan;
    if (has_fatbin_magic(bytes.copy(0, std::min<uint64_t>(bytes.size(), 4), "magic"))) {
      inventory.format = "fatbin";
      scan_fatbin_region(bytes, 0, bytes.size(), "", scan);
    } else {
      ElfFile elf = read_elf(bytes);
      inventory.format = elf.kind();
      inventory.machine = elf.machine_name();
      if (elf.machine == kElfMachineCuda) {
        auto arch = cubin_arch(elf);
        if (!arch) throw ParseError(48, "cubin e_flags name no sm arch");
        FatbinEntry entry;
        entry.image = {KernelImage::Kind::sass, *arch, ArchVariant::plain};
        entry.payload_size = bytes.size();
        scan.container_ranges.push_back({0, bytes.size(), "cubin"});
        scan.entries.push_back(entry);
      } else {
        for (const char* name : {".nv_fatbin", "__nv_relfatbin"})
          if (const ElfSection* section = elf.find(name))
            scan_fatbin_region(bytes, section->offset, section->size, name, scan);
      }
    }
    inventory.containers = scan.containers;
    inventory.container_ranges = std::move(scan.container_ranges);
    inventory.entries = std::move(scan.entries);
    if (verify_cubins)
      for (const auto& entry : inventory.entries)
        if (entry.image.kind == KernelImage::Kind::sass && inventory.format != "cubin") verify_cubin(bytes, entry);
  } catch (const ParseError& e) {
    inventory.error = e.what();
  }
  return inventory;
}

}  // namespace archbuild
