#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace archbuild {

// A malformed binary: what was expected and the file offset where it broke.
class ParseError : public std::runtime_error {
 public:
  ParseError(uint64_t offset, const std::string& what)
      : std::runtime_error("at offset " + std::to_string(offset) + " (0x" + to_hex(offset) + "): " + what),
        offset_(offset) {}
  uint64_t offset() const { return offset_; }

 private:
  static std::string to_hex(uint64_t value) {
    char text[20];
    std::snprintf(text, sizeof text, "%llx", static_cast<unsigned long long>(value));
    return text;
  }
  uint64_t offset_;
};

// Bytes that are produced rather than stored, such as a compressed wheel
// member: read(offset) either copies exactly `length` bytes or throws
// ParseError (the data ended early, or is corrupt).
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual void read(void* out, uint64_t offset, uint64_t length, const char* what) = 0;
};

// Bounds-checked little-endian reads over untrusted bytes, either in memory
// (a cubin inside a fatbin), in a file read with pread (so walking the
// headers of a 456 MB library maps none of it), or from a ByteSource (a wheel
// member, streamed). Every read either lies fully inside the data or throws
// ParseError naming the offset.
class ByteView {
 public:
  explicit ByteView(std::span<const uint8_t> data) : memory_(data), size_(data.size()) {}
  ByteView(int fd, uint64_t size) : fd_(fd), size_(size) {}
  // `size` is what the source declares; a source that holds less fails the read.
  ByteView(ByteSource& source, uint64_t size) : source_(&source), size_(size) {}

  // The most one copy() from a ByteSource allocates: a declared size is not
  // yet data, and no fatbin container or name table comes near this.
  static constexpr uint64_t kMaxSourceCopy = 256ull << 20;

  uint64_t size() const { return size_; }
  bool has(uint64_t offset, uint64_t length) const { return offset <= size_ && length <= size_ - offset; }

  template <typename T>
  T read(uint64_t offset, const char* what) const {
    T value;
    copy_into(&value, offset, sizeof value, what);  // x86-64 and arm64 are little-endian
    return value;
  }

  std::vector<uint8_t> copy(uint64_t offset, uint64_t length, const char* what) const {
    require(offset, length, what);
    if (source_ && length > kMaxSourceCopy)
      throw ParseError(offset, std::string(what) + " of " + std::to_string(length) + " bytes is more than the " +
                                   std::to_string(kMaxSourceCopy) + " read into memory at once");
    std::vector<uint8_t> out(length);
    copy_into(out.data(), offset, length, what);
    return out;
  }

  void require(uint64_t offset, uint64_t length, const char* what) const {
    if (!has(offset, length))
      throw ParseError(offset, std::string("truncated: ") + what + " needs " + std::to_string(length) +
                                   " bytes, the file has " + std::to_string(offset < size_ ? size_ - offset : 0) +
                                   " left");
  }

 private:
  void copy_into(void* out, uint64_t offset, uint64_t length, const char* what) const;

  std::span<const uint8_t> memory_;
  int fd_ = -1;
  ByteSource* source_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace archbuild
