#include "binary/fatbin.h"

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <lz4.h>
#include <zstd.h>

#include "arch/compat.h"
#include "binary/binary_inventory.h"
#include "binary/binary_test_support.h"
#include "binary/byte_view.h"

using namespace archbuild;

namespace {

struct EntrySpec {
  uint16_t kind;  // 1 PTX, 2 ELF
  uint32_t sm;
  uint64_t flags;
  std::vector<uint8_t> payload;
  uint64_t uncompressed = 0;
  uint32_t compressed = 0;
};

std::vector<uint8_t> fatbin(const std::vector<EntrySpec>& entries) {
  std::vector<uint8_t> body;
  for (const auto& e : entries) {
    size_t at = body.size();
    uint64_t padded = (e.payload.size() + 7) / 8 * 8;
    put<uint16_t>(body, at + 0, e.kind);
    put<uint16_t>(body, at + 2, 0x0101);
    put<uint32_t>(body, at + 4, 64);
    put<uint64_t>(body, at + 8, padded);
    put<uint32_t>(body, at + 16, e.compressed);
    put<uint32_t>(body, at + 28, e.sm);
    put<uint64_t>(body, at + 40, e.flags);
    put<uint64_t>(body, at + 56, e.uncompressed);
    body.insert(body.end(), e.payload.begin(), e.payload.end());
    body.resize(at + 64 + padded, 0);
  }
  std::vector<uint8_t> out;
  put<uint32_t>(out, 0, kFatbinMagic);
  put<uint16_t>(out, 4, 1);
  put<uint16_t>(out, 6, 16);
  put<uint64_t>(out, 8, body.size());
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

EntrySpec zstd_entry(uint16_t kind, uint32_t sm, uint64_t flags, const std::vector<uint8_t>& raw) {
  std::vector<uint8_t> packed(ZSTD_compressBound(raw.size()));
  packed.resize(ZSTD_compress(packed.data(), packed.size(), raw.data(), raw.size(), 3));
  return {kind, sm, flags | 0x8000, packed, raw.size(), static_cast<uint32_t>(packed.size())};
}

EntrySpec lz4_entry(uint16_t kind, uint32_t sm, uint64_t flags, const std::vector<uint8_t>& raw) {
  std::vector<uint8_t> packed(LZ4_compressBound(raw.size()));
  packed.resize(LZ4_compress_default(reinterpret_cast<const char*>(raw.data()), reinterpret_cast<char*>(packed.data()),
                                     raw.size(), packed.size()));
  return {kind, sm, flags | 0x2000, packed, raw.size(), static_cast<uint32_t>(packed.size())};
}

}  // namespace

TEST(Fatbin, ListsEntriesWithVariantsAndCompression) {
  std::vector<uint8_t> ptx_text = {'.', 'v', 'e', 'r', 's', 'i', 'o', 'n', ' ', '9', '.', '0', '\n'};
  auto bytes = fatbin({{2, 80, 0x11, fake_cubin(80)},
                       {2, 90, 0x100011, fake_cubin(90)},
                       {2, 100, 0x1200011, fake_cubin(100)},
                       zstd_entry(2, 120, 0x11, fake_cubin(120)),
                       lz4_entry(2, 86, 0x11, fake_cubin(86)),
                       zstd_entry(1, 90, 0x11, ptx_text)});
  auto inventory = inspect(bytes, /*verify=*/true);
  ASSERT_FALSE(inventory.error) << *inventory.error;
  EXPECT_EQ(inventory.format, "fatbin");
  EXPECT_EQ(inventory.containers, 1u);
  ArchCounts sass = {{"sm_80", 1}, {"sm_86", 1}, {"sm_90a", 1}, {"sm_100f", 1}, {"sm_120", 1}};
  EXPECT_EQ(inventory.sass_counts(), sass);
  ArchCounts ptx = {{"compute_90", 1}};
  EXPECT_EQ(inventory.ptx_counts(), ptx);
  EXPECT_EQ(inventory.compressions(), (std::vector<std::string>{"lz4", "zstd"}));
  EXPECT_EQ(inventory.verdict_for({9, 0}), RunVerdict::native);
  EXPECT_EQ(inventory.verdict_for({8, 9}), RunVerdict::native);   // sm_86
  EXPECT_EQ(inventory.verdict_for({10, 3}), RunVerdict::native);  // sm_100f
  EXPECT_EQ(inventory.verdict_for({7, 5}), RunVerdict::no_kernel_image);
  EXPECT_EQ(inventory.verdict_for({11, 0}), RunVerdict::ptx_jit);  // compute_90 JITs forward
}

TEST(Fatbin, DecompressesPayloads) {
  auto raw = fake_cubin(90);
  for (auto entry : {zstd_entry(2, 90, 0x11, raw), lz4_entry(2, 90, 0x11, raw)}) {
    auto bytes = fatbin({entry});
    FatbinScan scan;
    ByteView view(bytes);
    scan_fatbin_region(view, 0, bytes.size(), "", scan);
    ASSERT_EQ(scan.entries.size(), 1u);
    EXPECT_EQ(entry_payload(view, scan.entries[0]), raw);
  }
}

TEST(Fatbin, VerifyCatchesAnEntryThatLiesAboutItsArch) {
  auto bytes = fatbin({{2, 90, 0x11, fake_cubin(80)}});
  auto inventory = inspect(bytes, true);
  ASSERT_TRUE(inventory.error);
  EXPECT_NE(inventory.error->find("sm_80"), std::string::npos) << *inventory.error;
  EXPECT_FALSE(inspect(bytes, false).error);
}

TEST(Fatbin, CorruptCompressedPayloadIsAnErrorNotACrash) {
  auto entry = zstd_entry(2, 90, 0x11, fake_cubin(90));
  entry.payload[entry.payload.size() / 2] ^= 0xff;
  entry.payload[0] ^= 0xff;  // break the zstd magic
  auto inventory = inspect(fatbin({entry}), true);
  ASSERT_TRUE(inventory.error);
  EXPECT_NE(inventory.error->find("zstd"), std::string::npos) << *inventory.error;
}

TEST(Fatbin, EveryTruncationIsAnErrorWithAnOffset) {
  auto bytes = fatbin({{2, 80, 0x11, fake_cubin(80)}, {2, 90, 0x11, fake_cubin(90)}});
  for (size_t length = 1; length < bytes.size(); ++length) {
    std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + length);
    auto inventory = inspect(prefix);
    ASSERT_TRUE(inventory.error) << "prefix of " << length << " bytes was accepted";
    EXPECT_NE(inventory.error->find("offset"), std::string::npos) << *inventory.error;
  }
}

TEST(Fatbin, BadKindAndOverlongSizesNameTheOffset) {
  auto bytes = fatbin({{2, 80, 0x11, fake_cubin(80)}});
  auto bad_kind = bytes;
  put<uint16_t>(bad_kind, 16, 7);
  auto inventory = inspect(bad_kind);
  ASSERT_TRUE(inventory.error);
  EXPECT_NE(inventory.error->find("offset 16"), std::string::npos) << *inventory.error;
  auto too_long = bytes;
  put<uint64_t>(too_long, 16 + 8, 1ull << 40);
  inventory = inspect(too_long);
  ASSERT_TRUE(inventory.error);
  EXPECT_NE(inventory.error->find("offset 24"), std::string::npos) << *inventory.error;
  auto huge_uncompressed = fatbin({zstd_entry(2, 80, 0x11, fake_cubin(80))});
  put<uint64_t>(huge_uncompressed, 16 + 56, 1ull << 40);
  EXPECT_TRUE(inspect(huge_uncompressed, true).error);
}
