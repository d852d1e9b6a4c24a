#include "core/sha256.h"

#include <fstream>
#include <memory>

#include <openssl/evp.h>

#include "core/error.h"

namespace archbuild {

Sha256::Sha256() : context_(EVP_MD_CTX_new(), EVP_MD_CTX_free) {
  EVP_DigestInit_ex(context_.get(), EVP_sha256(), nullptr);
}

void Sha256::update(const void* data, size_t size) { EVP_DigestUpdate(context_.get(), data, size); }

std::string Sha256::hex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(context_.get(), digest, &length);
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < length; ++i) {
    out += digits[digest[i] >> 4];
    out += digits[digest[i] & 15];
  }
  return out;
}

std::string sha256_hex(std::string_view data) {
  Sha256 digest;
  digest.update(data.data(), data.size());
  return digest.hex();
}

std::string sha256_file_hex(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail_bad_input("cannot read " + path.string());
  Sha256 digest;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) digest.update(buffer, static_cast<size_t>(in.gcount()));
  return digest.hex();
}

}  // namespace archbuild
