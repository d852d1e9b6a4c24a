#include "binary/fatbin.h"

#include <memory>
#include <new>
#include <optional>

#include <lz4.h>
#include <zstd.h>

#include "binary/byte_view.h"

namespace archbuild {

namespace {
constexpr uint16_t kEntryPtx = 1;
constexpr uint16_t kEntryElf = 2;
constexpr uint64_t kFlagLz4 = 0x2000;
constexpr uint64_t kFlagZstd = 0x8000;
constexpr uint64_t kFlagArchSpecific = 0x100000;
constexpr uint64_t kFlagFamilySpecific = 0x200000;
constexpr uint32_t kMinEntryHeader = 64;
}  // namespace

std::string to_string(Compression compression) {
  switch (compression) {
    case Compression::none: return "none";
    case Compression::lz4: return "lz4";
    case Compression::zstd: return "zstd";
  }
  return "?";
}

bool has_fatbin_magic(std::span<const uint8_t> bytes) {
  if (bytes.size() < 4) return false;
  uint32_t magic;
  std::memcpy(&magic, bytes.data(), 4);
  return magic == kFatbinMagic;
}

namespace {

FatbinEntry read_entry(const ByteView& view, uint64_t at, const std::string& section) {
  uint16_t kind = view.read<uint16_t>(at, "fatbin entry kind");
  if (kind != kEntryPtx && kind != kEntryElf)
    throw ParseError(at, "fatbin entry kind " + std::to_string(kind) + " is neither PTX (1) nor ELF (2)");
  FatbinEntry entry;
  entry.section = section;
  entry.header_offset = at;
  entry.header_size = view.read<uint32_t>(at + 4, "fatbin entry header size");
  if (entry.header_size < kMinEntryHeader)
    throw ParseError(at + 4, "fatbin entry header size " + std::to_string(entry.header_size) + " < 64");
  view.require(at, entry.header_size, "fatbin entry header");
  entry.payload_size = view.read<uint64_t>(at + 8, "fatbin entry payload size");
  entry.compressed_size = view.read<uint32_t>(at + 16, "fatbin entry compressed size");
  uint32_t sm = view.read<uint32_t>(at + 28, "fatbin entry arch");
  uint64_t flags = view.read<uint64_t>(at + 40, "fatbin entry flags");
  entry.uncompressed_size = view.read<uint64_t>(at + 56, "fatbin entry uncompressed size");
  if (sm < 10 || sm > 2550)
    throw ParseError(at + 28, "fatbin entry arch " + std::to_string(sm) + " is not an sm number");
  entry.image.kind = kind == kEntryPtx ? KernelImage::Kind::ptx : KernelImage::Kind::sass;
  entry.image.cc = {static_cast<int>(sm / 10), static_cast<int>(sm % 10)};
  entry.image.variant = flags & kFlagArchSpecific     ? ArchVariant::arch_specific
                        : flags & kFlagFamilySpecific ? ArchVariant::family_specific
                                                      : ArchVariant::plain;
  entry.compression = flags & kFlagZstd ? Compression::zstd : flags & kFlagLz4 ? Compression::lz4 : Compression::none;
  return entry;
}

}  // namespace

void scan_fatbin_region(const ByteView& view, uint64_t start, uint64_t size, const std::string& section,
                        FatbinScan& out) {
  view.require(start, size, "fatbin region");
  const uint64_t end = start + size;
  uint64_t at = start;
  while (at < end) {
    // Containers may be padded apart with zeros for alignment.
    if (view.read<uint8_t>(at, "fatbin padding") == 0) {
      ++at;
      continue;
    }
    if (end - at < 16) throw ParseError(at, "truncated fatbin container header");
    if (view.read<uint32_t>(at, "fatbin magic") != kFatbinMagic)
      throw ParseError(at, "expected fatbin container magic 0xBA55ED50 in " +
                               (section.empty() ? std::string("fatbin") : section));
    uint16_t header_size = view.read<uint16_t>(at + 6, "fatbin container header size");
    uint64_t rest = view.read<uint64_t>(at + 8, "fatbin container size");
    if (header_size < 16)
      throw ParseError(at + 6, "fatbin container header size " + std::to_string(header_size) + " < 16");
    if (header_size > end - at || rest > end - at - header_size)
      throw ParseError(at + 8, "fatbin container of " + std::to_string(rest) + " bytes runs past the end of " +
                                   (section.empty() ? std::string("the file") : section));
    ++out.containers;
    out.container_ranges.push_back({at, header_size + rest, section});
    uint64_t entry_at = at + header_size;
    const uint64_t container_end = entry_at + rest;
    while (entry_at < container_end) {
      if (container_end - entry_at < kMinEntryHeader) {
        // trailing zero padding inside the container is allowed
        auto tail = view.copy(entry_at, container_end - entry_at, "container tail");
        for (auto byte : tail)
          if (byte) throw ParseError(entry_at, "truncated fatbin entry header");
        break;
      }
      FatbinEntry entry = read_entry(view, entry_at, section);
      if (entry.header_size > container_end - entry_at ||
          entry.payload_size > container_end - entry_at - entry.header_size)
        throw ParseError(entry_at + 8, "fatbin entry payload of " + std::to_string(entry.payload_size) +
                                           " bytes runs past its container");
      entry_at += entry.header_size + entry.payload_size;
      out.entries.push_back(std::move(entry));
    }
    at = container_end;
  }
}

namespace {

// What an LZ4 block decodes to, summed from its sequences without decoding
// (nullopt when they do not parse), so that the output buffer is sized by the
// bytes the input holds, not by the header's word: each input byte yields
// at most 255 output bytes.
std::optional<uint64_t> lz4_block_output_size(std::span<const uint8_t> block) {
  size_t at = 0;
  auto length = [&](uint64_t nibble) -> std::optional<uint64_t> {
    if (nibble != 15) return nibble;
    for (;;) {
      if (at == block.size()) return std::nullopt;
      uint8_t more = block[at++];
      nibble += more;
      if (more != 255) return nibble;
    }
  };
  uint64_t output = 0;
  while (at < block.size()) {
    uint8_t token = block[at++];
    auto literals = length(token >> 4);
    if (!literals || *literals > block.size() - at) return std::nullopt;
    at += *literals;
    output += *literals;
    if (at == block.size()) return output;  // the last sequence holds literals only
    if (block.size() - at < 2) return std::nullopt;
    at += 2;  // match offset
    auto match = length(token & 15);
    if (!match) return std::nullopt;
    output += *match + 4;  // LZ4's minimum match
  }
  return std::nullopt;  // empty, or ends with a match
}

[[noreturn]] void larger_than_declared(const FatbinEntry& entry, const char* format) {
  throw ParseError(entry.header_offset + 56, std::string(format) + " payload decompresses to more than the " +
                                                 std::to_string(entry.uncompressed_size) +
                                                 " bytes its header declares");
}

std::vector<uint8_t> lz4_payload(const std::vector<uint8_t>& input, const FatbinEntry& entry, uint64_t payload_at) {
  auto size = lz4_block_output_size(input);
  if (!size) throw ParseError(payload_at, "corrupt LZ4 payload");
  if (*size > entry.uncompressed_size) larger_than_declared(entry, "LZ4");
  std::vector<uint8_t> output(*size);
  int written = LZ4_decompress_safe(reinterpret_cast<const char*>(input.data()), reinterpret_cast<char*>(output.data()),
                                    static_cast<int>(input.size()), static_cast<int>(output.size()));
  if (written < 0) throw ParseError(payload_at, "corrupt LZ4 payload");
  output.resize(static_cast<size_t>(written));
  return output;
}

// Streamed a chunk at a time, so memory follows the bytes the frames really
// produce, and stopped as soon as they pass the declared size.
std::vector<uint8_t> zstd_payload(const std::vector<uint8_t>& input, const FatbinEntry& entry, uint64_t payload_at) {
  std::unique_ptr<ZSTD_DStream, decltype(&ZSTD_freeDStream)> stream(ZSTD_createDStream(), ZSTD_freeDStream);
  if (!stream) throw std::bad_alloc();
  // The window a frame asks for is allocated too: no more than the declared
  // output needs (a frame asking more is refused as corrupt).
  int window_log = 10;  // zstd's smallest window
  while ((uint64_t{1} << window_log) < entry.uncompressed_size) ++window_log;
  ZSTD_DCtx_setParameter(stream.get(), ZSTD_d_windowLogMax, window_log);
  std::vector<uint8_t> chunk(ZSTD_DStreamOutSize()), output;
  ZSTD_inBuffer in{input.data(), input.size(), 0};
  size_t hint = 0;
  bool more;
  do {
    ZSTD_outBuffer out{chunk.data(), chunk.size(), 0};
    hint = ZSTD_decompressStream(stream.get(), &out, &in);
    if (ZSTD_isError(hint))
      throw ParseError(payload_at, std::string("corrupt zstd payload: ") + ZSTD_getErrorName(hint));
    if (out.pos > entry.uncompressed_size - output.size()) larger_than_declared(entry, "zstd");
    output.insert(output.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(out.pos));
    // A finished frame may be followed by another; an unfinished one needs
    // more input, or room to flush what it holds.
    more = in.pos < in.size || (hint != 0 && out.pos == out.size);
  } while (more);
  if (hint != 0) throw ParseError(payload_at, "corrupt zstd payload: its frame ends early");
  return output;
}

}  // namespace

std::vector<uint8_t> entry_payload(const ByteView& view, const FatbinEntry& entry) {
  uint64_t payload_at = entry.header_offset + entry.header_size;
  if (entry.compression == Compression::none) {
    return view.copy(payload_at, entry.payload_size, "fatbin entry payload");
  }
  uint64_t stored = entry.compressed_size ? entry.compressed_size : entry.payload_size;
  if (stored > entry.payload_size) throw ParseError(entry.header_offset + 16, "compressed size exceeds the payload");
  // The declared size is only a ceiling: no real cubin or PTX is this large,
  // and neither LZ4 (255:1 at most) nor fatbin's zstd level gets near 1024:1.
  // The output grows with what decompression really produces.
  constexpr uint64_t kMaxImage = 512ull << 20;
  constexpr uint64_t kMaxRatio = 1024;
  auto input = view.copy(payload_at, stored, "compressed payload");
  if (entry.uncompressed_size == 0 || entry.uncompressed_size > kMaxImage ||
      entry.uncompressed_size > stored * kMaxRatio)
    throw ParseError(entry.header_offset + 56,
                     "implausible uncompressed size " + std::to_string(entry.uncompressed_size));
  return entry.compression == Compression::lz4 ? lz4_payload(input, entry, payload_at)
                                               : zstd_payload(input, entry, payload_at);
}

}  // namespace archbuild
