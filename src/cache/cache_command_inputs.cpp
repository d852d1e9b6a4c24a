#include "cache/cache_command_inputs.h"

#include <cstdint>

#include "cache/wheel_store.h"
#include "core/error.h"
#include "core/regular_file.h"
#include "core/user_path.h"

namespace archbuild {

namespace {

// A public key PEM is some hundred bytes.
constexpr uint64_t kMaxTrustedKeyPemBytes = 64 * 1024;

}  // namespace

std::vector<Ed25519Key> read_trusted_keys(const std::vector<std::string>& files) {
  std::vector<Ed25519Key> keys;
  for (const auto& file : files) {
    std::string pem;
    if (auto why = read_regular_file(file, kMaxTrustedKeyPemBytes, pem); !why.empty())
      fail_bad_input("--trusted-key " + file + " " + why);
    keys.push_back(Ed25519Key::parse_public(pem, "--trusted-key " + file));
  }
  return keys;
}

std::string read_key_text_at(const std::string& where) {
  std::filesystem::path path(where);
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) path /= "key.txt";
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    fail_bad_input(path.string() + " is not a regular file (a key text is)");
  std::string text;
  if (auto why = read_regular_file(path, kMaxKeyTextBytes, text); why.starts_with("cannot be opened"))
    fail_bad_input("no cache key text at " + path.string() + " (give a key.txt or a build's --out dir)");
  else if (!why.empty())
    fail_bad_input(path.string() + " " + why);
  if (text.rfind("cache_format ", 0) != 0) fail_bad_input(path.string() + " is not an archbuild key text");
  return text;
}

std::filesystem::path push_directory(const std::string& dest_text) {
  if (dest_text.empty()) fail_bad_input("cache push: give the destination directory");
  auto dest = checked_user_path(dest_text, "cache push DEST");
  std::error_code ec;
  if (std::filesystem::exists(dest, ec) && !std::filesystem::is_directory(dest, ec))
    fail_bad_input("cache push: " + dest.string() + " is not a directory");
  return dest;
}

SimpleIndexPlace simple_index_place(const std::string& wheels_dir, const std::string& index_dir) {
  std::filesystem::path wheels = std::filesystem::absolute(wheels_dir);
  std::filesystem::path target = index_dir.empty() ? wheels / "simple" : std::filesystem::absolute(index_dir);
  std::error_code ec;
  if (index_dir.empty() && std::filesystem::is_symlink(std::filesystem::symlink_status(target, ec)))
    fail_bad_input(target.string() + " is a symbolic link: archbuild follows no link below WHEELS " +
                   "(name the index dir with --index DIR)");
  return {wheels, target};
}

}  // namespace archbuild
