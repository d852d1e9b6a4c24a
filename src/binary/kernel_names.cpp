#include "binary/kernel_names.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>

#include <cxxabi.h>

#include "binary/elf_file.h"

namespace archbuild {

namespace {

constexpr uint32_t kSectionSymbolTable = 2;  // SHT_SYMTAB
constexpr uint8_t kSymbolFunction = 2;       // STT_FUNC
constexpr uint8_t kCudaEntry = 0x10;         // STO_CUDA_ENTRY: a __global__ function
constexpr uint64_t kSymbolSize = 24;         // Elf64_Sym

bool less_by_arch(const std::string& a, const std::string& b) {
  auto number = [](const std::string& name) {
    auto at = name.find('_');
    return at == std::string::npos ? 0 : std::atoi(name.c_str() + at + 1);
  };
  return std::pair(number(a), a) < std::pair(number(b), b);
}

}  // namespace

std::set<std::string> BinaryKernels::all_names() const {
  std::set<std::string> names;
  for (const auto& arch : archs) names.insert(arch.names.begin(), arch.names.end());
  return names;
}

std::vector<std::string> cubin_kernel_names(const ByteView& cubin) {
  ElfFile elf = read_elf(cubin);
  std::set<std::string> names;
  for (const auto& table : elf.sections) {
    if (table.type != kSectionSymbolTable) continue;
    const ElfStrings text = linked_strings(cubin, elf, table, "symbol string table");
    for (uint64_t at = table.offset; at + kSymbolSize <= table.offset + table.size; at += kSymbolSize) {
      auto name_offset = cubin.read<uint32_t>(at, "st_name");
      auto info = cubin.read<uint8_t>(at + 4, "st_info");
      auto other = cubin.read<uint8_t>(at + 5, "st_other");
      if ((info & 0xf) != kSymbolFunction || (other & kCudaEntry) == 0) continue;
      auto name = text.at(name_offset);
      if (!name) throw ParseError(at, "symbol name offset outside its string table");
      if (!name->empty()) names.insert(std::move(*name));
    }
  }
  return {names.begin(), names.end()};
}

std::vector<std::string> ptx_kernel_names(std::string_view ptx) {
  std::set<std::string> names;
  constexpr std::string_view kEntry = ".entry";
  for (size_t at = ptx.find(kEntry); at != std::string_view::npos; at = ptx.find(kEntry, at + kEntry.size())) {
    // a directive, not part of a longer word (".entry" vs ".entryx")
    if (at > 0 && !std::isspace(static_cast<unsigned char>(ptx[at - 1]))) continue;
    size_t start = at + kEntry.size();
    if (start >= ptx.size() || !std::isspace(static_cast<unsigned char>(ptx[start]))) continue;
    while (start < ptx.size() && std::isspace(static_cast<unsigned char>(ptx[start]))) ++start;
    size_t end = start;
    while (end < ptx.size() && (std::isalnum(static_cast<unsigned char>(ptx[end])) || ptx[end] == '_' ||
                                ptx[end] == '$' || ptx[end] == '.'))
      ++end;
    if (end > start) names.insert(std::string(ptx.substr(start, end - start)));
  }
  return {names.begin(), names.end()};
}

BinaryKernels list_kernels(const BinaryInventory& inventory, const ByteView& bytes, const EntryFilter& want) {
  BinaryKernels kernels;
  kernels.path = inventory.path;
  std::map<std::string, std::set<std::string>, decltype(&less_by_arch)> by_arch(&less_by_arch);
  for (const auto& entry : inventory.entries) {
    if (!inventory.is_loadable(entry) || (want && !want(entry))) continue;
    try {
      auto payload = entry_payload(bytes, entry);
      std::vector<std::string> names;
      if (entry.image.kind == KernelImage::Kind::sass) {
        names = cubin_kernel_names(ByteView(payload));
      } else {
        names = ptx_kernel_names(std::string_view(reinterpret_cast<const char*>(payload.data()), payload.size()));
      }
      by_arch[entry.image.name()].insert(names.begin(), names.end());
    } catch (const ParseError& e) {
      if (!kernels.error)
        kernels.error = entry.image.name() + " image at offset " + std::to_string(entry.header_offset) + ": " +
                        e.what();
    }
  }
  for (auto& [arch, names] : by_arch) kernels.archs.push_back({arch, {names.begin(), names.end()}});
  return kernels;
}

std::string demangle(const std::string& name) {
  if (name.rfind("_Z", 0) != 0) return name;
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> readable(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status),
                                                       &std::free);
  return status == 0 && readable ? std::string(readable.get()) : name;
}

}  // namespace archbuild
