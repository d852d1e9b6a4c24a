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

// Bounds-checked little-endian reads over untrusted bytes, either in memory
// (a wheel member) or in a file read with pread (so walking the headers of a
// 456 MB library maps none of it). Every read either lies fully inside the
// data or throws ParseError naming the offset.
class ByteView {
 public:
  explicit ByteView(std::span<const uint8_t> data) : memory_(data), size_(data.size()) {}
  ByteView(int fd, uint64_t size) : fd_(fd), size_(size) {}

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
  uint64_t size_ = 0;
};

}  // namespace archbuild
