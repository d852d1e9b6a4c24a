#include "binary/fatbin.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
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

namespace {

const FatbinEntry& only_entry(const ByteView& view, FatbinScan& scan) {
  scan_fatbin_region(view, 0, view.size(), "", scan);
  EXPECT_EQ(scan.entries.size(), 1u);
  return scan.entries.at(0);
}

std::string payload_error(const std::vector<uint8_t>& bytes) {
  ByteView view(bytes);
  FatbinScan scan;
  try {
    entry_payload(view, only_entry(view, scan));
  } catch (const ParseError& e) {
    return e.what();
  }
  return "";
}

// Bytes that do not compress: a payload as large as the stored data.
std::vector<uint8_t> noise(size_t size) {
  std::vector<uint8_t> bytes(size);
  uint32_t state = 12345;
  for (auto& byte : bytes) byte = static_cast<uint8_t>((state = state * 1103515245 + 12345) >> 16);
  return bytes;
}

uint64_t address_space_bytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0;
  statm >> pages;
  return pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace

TEST(Fatbin, PayloadLargerThanItsDeclaredSizeIsAnError) {
  auto raw = fake_cubin(90);
  for (auto entry : {zstd_entry(2, 90, 0x11, raw), lz4_entry(2, 90, 0x11, raw)}) {
    entry.uncompressed = raw.size() - 1;
    auto error = payload_error(fatbin({entry}));
    EXPECT_NE(error.find("decompresses to more than the 255 bytes its header declares"), std::string::npos) << error;
  }
}

TEST(Fatbin, TruncatedOrGarbageCompressedPayloadsAreErrors) {
  auto zstd = zstd_entry(2, 90, 0x11, noise(5000));
  zstd.payload.resize(zstd.payload.size() - 10);  // the frame ends early
  zstd.compressed = static_cast<uint32_t>(zstd.payload.size());
  EXPECT_NE(payload_error(fatbin({zstd})).find("zstd"), std::string::npos);
  auto lz4 = lz4_entry(2, 90, 0x11, fake_cubin(90));
  lz4.payload.resize(lz4.payload.size() - 3);
  lz4.compressed = static_cast<uint32_t>(lz4.payload.size());
  EXPECT_NE(payload_error(fatbin({lz4})).find("corrupt LZ4 payload"), std::string::npos);
  auto lz4_garbage = lz4_entry(2, 90, 0x11, fake_cubin(90));
  lz4_garbage.payload.assign(40, 0xff);  // one endless literal length
  lz4_garbage.compressed = 40;
  EXPECT_NE(payload_error(fatbin({lz4_garbage})).find("corrupt LZ4 payload"), std::string::npos);
}

// A zstd frame may ask for a 128 MiB window (which streaming decompression
// allocates) to produce 256 bytes: refused, the window being bounded by the
// entry's declared output.
TEST(Fatbin, ZstdWindowIsBoundedByTheDeclaredSize) {
  auto raw = fake_cubin(90);
  std::vector<uint8_t> frame = {0x28, 0xB5, 0x2F, 0xFD, 0x00, 17 << 3};  // no content size, window 2^(10+17)
  uint32_t block_header = static_cast<uint32_t>(raw.size()) << 3 | 1;    // the last block, raw
  for (int i = 0; i < 3; ++i) frame.push_back(static_cast<uint8_t>(block_header >> (8 * i)));
  frame.insert(frame.end(), raw.begin(), raw.end());
  EntrySpec entry{2, 90, 0x8011, frame, raw.size(), static_cast<uint32_t>(frame.size())};
  auto error = payload_error(fatbin({entry}));
  EXPECT_NE(error.find("corrupt zstd payload"), std::string::npos) << error;
  // the same block in a frame with a window that fits decodes
  entry.payload[5] = 0;  // 2^10
  auto fitting = fatbin({entry});
  ByteView fitting_view(fitting);
  FatbinScan scan;
  EXPECT_EQ(entry_payload(fitting_view, only_entry(fitting_view, scan)), raw);
}

// An entry declares 512 MiB, the most a header may, for a payload large
// enough that the 1024:1 ratio allows it: the output must follow what the
// data decodes to, so the child succeeds with 64 MiB of address space to
// spare, where a buffer of the declared size would fail to allocate.
TEST(FatbinDeathTest, DeclaredUncompressedSizeIsACeilingNotAnAllocation) {
  constexpr uint64_t kDeclared = 512ull << 20;
  const size_t stored = (kDeclared / 1024) + 4096;
  auto lz4 = lz4_entry(2, 90, 0x11, noise(stored));  // decodes to `stored` bytes
  lz4.uncompressed = kDeclared;
  // A zstd frame of 256 bytes, then a skippable frame filling the payload.
  auto zstd = zstd_entry(2, 90, 0x11, fake_cubin(90));
  size_t frame_end = zstd.payload.size();
  put<uint32_t>(zstd.payload, frame_end, 0x184D2A50);
  put<uint32_t>(zstd.payload, frame_end + 4, static_cast<uint32_t>(stored));
  zstd.payload.resize(frame_end + 8 + stored, 0);
  zstd.compressed = static_cast<uint32_t>(zstd.payload.size());
  zstd.uncompressed = kDeclared;
  auto lz4_bytes = fatbin({lz4}), zstd_bytes = fatbin({zstd});
  auto decode_with_little_memory = [&] {
    rlimit limit{address_space_bytes() + (64ull << 20), RLIM_INFINITY};
    setrlimit(RLIMIT_AS, &limit);
    ByteView lz4_view(lz4_bytes), zstd_view(zstd_bytes);
    FatbinScan lz4_scan, zstd_scan;
    bool right = entry_payload(lz4_view, only_entry(lz4_view, lz4_scan)).size() == stored &&
                 entry_payload(zstd_view, only_entry(zstd_view, zstd_scan)) == fake_cubin(90);
    _exit(right ? 0 : 1);
  };
  EXPECT_EXIT(decode_with_little_memory(), ::testing::ExitedWithCode(0), "");
}
