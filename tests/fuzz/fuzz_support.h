// What the fuzz entry points share: a scratch dir and a file writer.
#pragma once

#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <string_view>

namespace archbuild::fuzz {

// For the targets whose parsers read files: made once per process under
// $TMPDIR (a tmpfs keeps it fast), removed at exit.
inline const std::filesystem::path& scratch_dir() {
  struct Scratch {
    std::filesystem::path path;
    Scratch() {
      std::string pattern = (std::filesystem::temp_directory_path() / "archbuild-fuzz-XXXXXX").string();
      path = mkdtemp(pattern.data());
    }
    ~Scratch() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static Scratch scratch;
  return scratch.path;
}

inline void write_bytes(const std::filesystem::path& file, std::span<const uint8_t> bytes) {
  std::filesystem::create_directories(file.parent_path());
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

inline void write_bytes(const std::filesystem::path& file, std::string_view text) {
  write_bytes(file, std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

}  // namespace archbuild::fuzz
