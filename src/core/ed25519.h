#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

struct evp_pkey_st;

namespace archbuild {

// A site's signing key: ed25519 through OpenSSL, PEM files
// (`openssl genpkey -algorithm ed25519` makes the same).
class Ed25519Key {
 public:
  // Reads a private key (PKCS#8 PEM). Throws UserError(bad_input) naming
  // the file when it is not an ed25519 private key.
  static Ed25519Key load_private(const std::filesystem::path& file);
  // Parses a public key (SubjectPublicKeyInfo PEM); `origin` names it in errors.
  static Ed25519Key parse_public(const std::string& pem, const std::string& origin);
  // A new key pair: `private_file` (mode 0600, never over an existing file)
  // and `private_file`.pub. Throws UserError naming what failed.
  static void generate(const std::filesystem::path& private_file);

  std::string sign(std::string_view data) const;  // raw 64-byte signature
  bool verify(std::string_view data, std::string_view signature) const;
  std::string public_pem() const;
  // sha256 of the raw 32-byte public key, hex: what a signature names.
  std::string key_id() const;

 private:
  explicit Ed25519Key(evp_pkey_st* key);
  std::shared_ptr<evp_pkey_st> key_;
};

std::string base64_encode(std::string_view data);
// nullopt-free: throws UserError(bad_input) on text that is not base64.
std::string base64_decode(std::string_view text);

}  // namespace archbuild
