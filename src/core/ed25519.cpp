#include "core/ed25519.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "core/error.h"
#include "core/regular_file.h"
#include "core/sha256.h"

namespace archbuild {

namespace {

constexpr uint64_t kMaxPemBytes = 64 * 1024;

std::string read_pem(const std::filesystem::path& file) {
  std::string text;
  if (auto why = read_regular_file(file, kMaxPemBytes, text); !why.empty())
    fail_bad_input("the key " + file.string() + " " + why);
  return text;
}

void write_new_file(const std::filesystem::path& file, const std::string& text, mode_t mode) {
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0)
    fail_bad_input("cannot create " + file.string() +
                   (errno == EEXIST ? ": it exists (archbuild never overwrites a key)"
                                    : ": " + std::string(std::strerror(errno))));
  bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  written = ::close(fd) == 0 && written;
  if (!written) fail_environment("cannot write " + file.string());
}

}  // namespace

Ed25519Key::Ed25519Key(evp_pkey_st* key) : key_(key, EVP_PKEY_free) {}

Ed25519Key Ed25519Key::load_private(const std::filesystem::path& file) {
  const auto pem = read_pem(file);
  std::unique_ptr<BIO, int (*)(BIO*)> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  // OpenSSL would ask the terminal for the pass phrase of an encrypted key (and
  // wait without one): archbuild never prompts, it says so.
  bool encrypted = false;
  auto no_prompt = [](char*, int, int, void* asked) -> int {
    *static_cast<bool*>(asked) = true;
    return -1;
  };
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio.get(), nullptr, no_prompt, &encrypted);
  if (encrypted || pem.find("ENCRYPTED") != std::string::npos) {
    if (key) EVP_PKEY_free(key);
    fail_bad_input(file.string() +
                   " is encrypted (protected by a pass phrase), and archbuild never prompts for one: "
                   "give it an unencrypted key, kept private by its file mode 0600 (`openssl pkey -in " +
                   file.string() + " -out PLAIN.key` writes one)");
  }
  if (!key || EVP_PKEY_id(key) != EVP_PKEY_ED25519) {
    if (key) EVP_PKEY_free(key);
    fail_bad_input(file.string() + " is not an ed25519 private key in PEM (make one with `archbuild cache keygen " +
                   file.string() + "` or `openssl genpkey -algorithm ed25519`)");
  }
  return Ed25519Key(key);
}

Ed25519Key Ed25519Key::parse_public(const std::string& pem, const std::string& origin) {
  std::unique_ptr<BIO, int (*)(BIO*)> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  EVP_PKEY* key = PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr);
  if (!key || EVP_PKEY_id(key) != EVP_PKEY_ED25519) {
    if (key) EVP_PKEY_free(key);
    fail_bad_input(origin + " is not an ed25519 public key in PEM");
  }
  return Ed25519Key(key);
}

void Ed25519Key::generate(const std::filesystem::path& private_file) {
  EVP_PKEY* raw = nullptr;
  std::unique_ptr<EVP_PKEY_CTX, void (*)(EVP_PKEY_CTX*)> context(EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nullptr),
                                                                 EVP_PKEY_CTX_free);
  if (!context || EVP_PKEY_keygen_init(context.get()) != 1 || EVP_PKEY_keygen(context.get(), &raw) != 1)
    fail_environment("OpenSSL could not make an ed25519 key");
  Ed25519Key key(raw);
  std::unique_ptr<BIO, int (*)(BIO*)> bio(BIO_new(BIO_s_mem()), BIO_free);
  if (PEM_write_bio_PrivateKey(bio.get(), key.key_.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1)
    fail_environment("OpenSSL could not write the key");
  char* data = nullptr;
  long size = BIO_get_mem_data(bio.get(), &data);
  const std::string private_pem(data, static_cast<size_t>(size));
  const auto public_file = std::filesystem::path(private_file.string() + ".pub");
  if (std::filesystem::exists(std::filesystem::symlink_status(public_file)))
    fail_bad_input("cannot create " + public_file.string() + ": it exists (archbuild never overwrites a key)");
  write_new_file(private_file, private_pem, 0600);
  write_new_file(public_file, key.public_pem(), 0644);
}

std::string Ed25519Key::sign(std::string_view data) const {
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> context(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  size_t size = 64;
  std::string signature(size, '\0');
  if (!context || EVP_DigestSignInit(context.get(), nullptr, nullptr, nullptr, key_.get()) != 1 ||
      EVP_DigestSign(context.get(), reinterpret_cast<unsigned char*>(signature.data()), &size,
                     reinterpret_cast<const unsigned char*>(data.data()), data.size()) != 1)
    fail_environment("OpenSSL could not sign with the ed25519 key (is it a private key?)");
  signature.resize(size);
  return signature;
}

bool Ed25519Key::verify(std::string_view data, std::string_view signature) const {
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> context(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  return context && EVP_DigestVerifyInit(context.get(), nullptr, nullptr, nullptr, key_.get()) == 1 &&
         EVP_DigestVerify(context.get(), reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
                          reinterpret_cast<const unsigned char*>(data.data()), data.size()) == 1;
}

std::string Ed25519Key::public_pem() const {
  std::unique_ptr<BIO, int (*)(BIO*)> bio(BIO_new(BIO_s_mem()), BIO_free);
  if (PEM_write_bio_PUBKEY(bio.get(), key_.get()) != 1) fail_environment("OpenSSL could not write a public key");
  char* data = nullptr;
  long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

std::string Ed25519Key::key_id() const {
  unsigned char raw[32];
  size_t size = sizeof raw;
  if (EVP_PKEY_get_raw_public_key(key_.get(), raw, &size) != 1) fail_environment("OpenSSL could not read the key");
  return sha256_hex(std::string_view(reinterpret_cast<const char*>(raw), size));
}

std::string base64_encode(std::string_view data) {
  std::string out(4 * ((data.size() + 2) / 3), '\0');
  int written = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(data.data()), static_cast<int>(data.size()));
  out.resize(static_cast<size_t>(written));
  return out;
}

std::string base64_decode(std::string_view text) {
  if (text.size() % 4 != 0 ||
      text.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") !=
          std::string_view::npos)
    fail_bad_input("not base64");
  std::string out(text.size() / 4 * 3, '\0');
  int written = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (written < 0) fail_bad_input("not base64");
  size_t padding = text.ends_with("==") ? 2 : text.ends_with("=") ? 1 : 0;
  out.resize(static_cast<size_t>(written) - padding);
  return out;
}

}  // namespace archbuild
