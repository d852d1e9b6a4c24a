#include "binary/elf_file.h"

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "binary/binary_inventory.h"
#include "binary/binary_test_support.h"

using namespace archbuild;

TEST(Elf, RejectsNonElfAndTruncatedHeaders) {
  std::vector<uint8_t> text = {'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd', '!', '!', '!', '!', '!'};
  auto inventory = inspect(text);
  ASSERT_TRUE(inventory.error);
  EXPECT_NE(inventory.error->find("not an ELF"), std::string::npos);
  auto cubin = fake_cubin(90);
  cubin.resize(40);
  EXPECT_TRUE(inspect(cubin).error);
  auto elf32 = fake_cubin(90);
  elf32[4] = 1;
  EXPECT_NE(inspect(elf32).error->find("64-bit"), std::string::npos);
}

TEST(Elf, CubinArchFollowsAbiVersion) {
  auto cubin = fake_cubin(120);
  auto inventory = inspect(cubin);
  ASSERT_FALSE(inventory.error) << *inventory.error;
  EXPECT_EQ(inventory.format, "cubin");
  EXPECT_EQ(inventory.sass_counts(), (ArchCounts{{"sm_120", 1}}));
  // EI_ABIVERSION 7 (pre-CUDA 13): the arch is the low byte of e_flags
  cubin[8] = 7;
  put<uint32_t>(cubin, 48, 0x00500050u);
  EXPECT_EQ(inspect(cubin).sass_counts(), (ArchCounts{{"sm_80", 1}}));
}

TEST(Elf, SectionOutsideTheFileIsAnError) {
  // ELF header pointing at a section table beyond the end.
  auto elf = fake_cubin(90);
  put<uint16_t>(elf, 18, 62);  // x86-64, so sections are read
  put<uint64_t>(elf, 40, 10'000);
  put<uint16_t>(elf, 60, 3);
  auto inventory = inspect(elf);
  ASSERT_TRUE(inventory.error);
  EXPECT_NE(inventory.error->find("offset"), std::string::npos);
}
