#include "binary/kernel_names.h"

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "binary/binary_test_support.h"

using namespace archbuild;

namespace {

struct Symbol {
  std::string name;
  uint8_t info;   // STT_* in the low nibble
  uint8_t other;  // 0x10: a CUDA entry
};

// A cubin with section names, a string table and a symbol table: what nvcc
// writes, cut down to what the census reads.
std::vector<uint8_t> cubin_with_symbols(const std::vector<Symbol>& symbols, uint32_t strtab_link = 2) {
  auto elf = fake_cubin(90);
  elf.resize(64);
  const std::string section_names = std::string("\0.shstrtab\0.strtab\0.symtab\0", 27);
  std::string strings(1, '\0');
  std::vector<uint32_t> offsets;
  for (const auto& symbol : symbols) {
    offsets.push_back(static_cast<uint32_t>(strings.size()));
    strings += symbol.name + '\0';
  }
  const uint64_t names_at = elf.size();
  elf.insert(elf.end(), section_names.begin(), section_names.end());
  const uint64_t strings_at = elf.size();
  elf.insert(elf.end(), strings.begin(), strings.end());
  const uint64_t symbols_at = elf.size();
  std::vector<uint8_t> table(24 * (symbols.size() + 1), 0);  // symbol 0 is the null symbol
  for (size_t i = 0; i < symbols.size(); ++i) {
    put<uint32_t>(table, 24 * (i + 1), offsets[i]);
    table[24 * (i + 1) + 4] = symbols[i].info;
    table[24 * (i + 1) + 5] = symbols[i].other;
  }
  elf.insert(elf.end(), table.begin(), table.end());
  const uint64_t headers_at = elf.size();
  std::vector<uint8_t> headers(64 * 4, 0);
  auto section = [&](int index, uint32_t name, uint32_t type, uint64_t offset, uint64_t size, uint32_t link) {
    put<uint32_t>(headers, 64 * index, name);
    put<uint32_t>(headers, 64 * index + 4, type);
    put<uint64_t>(headers, 64 * index + 24, offset);
    put<uint64_t>(headers, 64 * index + 32, size);
    put<uint32_t>(headers, 64 * index + 40, link);
  };
  section(1, 1, 3, names_at, section_names.size(), 0);
  section(2, 11, 3, strings_at, strings.size(), 0);
  section(3, 19, 2, symbols_at, table.size(), strtab_link);
  elf.insert(elf.end(), headers.begin(), headers.end());
  put<uint64_t>(elf, 40, headers_at);
  put<uint16_t>(elf, 60, 4);
  put<uint16_t>(elf, 62, 1);
  return elf;
}

}  // namespace

TEST(KernelNames, CubinEntriesAreFunctionsWithTheCudaEntryFlag) {
  auto cubin = cubin_with_symbols({{"_ZN2ns5scaleIfEEvPT_S1_i", 0x12, 0x10},
                                   {"plain_c", 0x12, 0x10},
                                   {"$_ZN2ns5otherEPf$_ZN2ns6helperEf", 0x02, 0x00},  // a device function
                                   {".text.plain_c", 0x03, 0x00},                     // a section symbol
                                   {"_ZN2ns5scaleIfEEvPT_S1_i", 0x12, 0x10}});        // listed once
  EXPECT_EQ(cubin_kernel_names(ByteView(cubin)), (std::vector<std::string>{"_ZN2ns5scaleIfEEvPT_S1_i", "plain_c"}));
}

TEST(KernelNames, ABadStringTableLinkIsAParseError) {
  auto cubin = cubin_with_symbols({{"k", 0x12, 0x10}}, 9);
  EXPECT_THROW(cubin_kernel_names(ByteView(cubin)), ParseError);
}

TEST(ElfStrings, ANameRunsToItsNulAndAnOffsetOutsideIsNone) {
  const std::string text("\0scale\0tail-without-nul", 23);
  ElfStrings strings(std::vector<uint8_t>(text.begin(), text.end()));
  EXPECT_EQ(strings.at(0), "");
  EXPECT_EQ(strings.at(1), "scale");
  EXPECT_EQ(strings.at(3), "ale");
  EXPECT_EQ(strings.at(7), "tail-without-nul");  // the table's end ends it
  EXPECT_EQ(strings.at(23), std::nullopt);
  const std::vector<uint8_t> bytes(text.begin(), text.end());
  EXPECT_THROW(read_strings(ByteView(bytes), 20, 8, "symbol string table"), ParseError);  // past the file's end
}

TEST(KernelNames, PtxEntriesAreDeclarationsNotWords) {
  const std::string ptx =
      ".version 9.0\n.target sm_90\n"
      ".visible .entry _Z6kernelPf(\n .param .u64 p)\n{ ret; }\n"
      ".entry\tplain_c (\n)\n"
      "// .entryx not_an_entry(\n"
      ".func helper()\n";
  EXPECT_EQ(ptx_kernel_names(ptx), (std::vector<std::string>{"_Z6kernelPf", "plain_c"}));
  EXPECT_TRUE(ptx_kernel_names("").empty());
  EXPECT_TRUE(ptx_kernel_names(".entry").empty());
}

TEST(KernelNames, DemangledForPeopleAndCNamesAsTheyAre) {
  EXPECT_EQ(demangle("_ZN2ns5scaleIfEEvPT_S1_i"), "void ns::scale<float>(float*, float, int)");
  EXPECT_EQ(demangle("plain_c"), "plain_c");
  EXPECT_EQ(demangle("_Znot_really_mangled"), "_Znot_really_mangled");
}

TEST(KernelNames, ListedPerArchFromAFileCubin) {
  auto cubin = cubin_with_symbols({{"_Z1kv", 0x12, 0x10}});
  auto inventory = inspect(cubin);
  ASSERT_FALSE(inventory.error) << *inventory.error;
  auto kernels = list_kernels(inventory, ByteView(cubin));
  ASSERT_EQ(kernels.archs.size(), 1u);
  EXPECT_EQ(kernels.archs[0].arch, "sm_90");
  EXPECT_EQ(kernels.all_names(), (std::set<std::string>{"_Z1kv"}));
  // A filter that wants nothing lists nothing.
  EXPECT_TRUE(list_kernels(inventory, ByteView(cubin), [](const FatbinEntry&) { return false; }).archs.empty());
}
