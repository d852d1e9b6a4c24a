#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

struct evp_md_ctx_st;

namespace archbuild {

// sha256 over data given in pieces: update() with each, hex() once at the end.
class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  std::string hex();

 private:
  std::unique_ptr<evp_md_ctx_st, void (*)(evp_md_ctx_st*)> context_;
};

std::string sha256_hex(std::string_view data);
// Throws UserError(bad_input) when the file cannot be read.
std::string sha256_file_hex(const std::filesystem::path& path);

}  // namespace archbuild
