#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/ed25519.h"

namespace archbuild {

// The files and directories the `cache` subcommands are given, read or
// checked before any work starts; each problem is UserError(bad_input)
// naming what was given.

// The public keys (PEM) of `--trusted-key FILE...`, in the order given.
std::vector<Ed25519Key> read_trusted_keys(const std::vector<std::string>& files);

// `cache why A B`: a key text from a key.txt or from a build's out dir (its
// key.txt). Refused: not a regular file, none there, or not archbuild's.
std::string read_key_text_at(const std::string& where);

// `cache push DEST` to a directory: DEST, which must be given and be a
// directory if it exists (a new one is made by the push).
std::filesystem::path push_directory(const std::string& dest_text);

// `cache index WHEELS [--index DIR]`: where the wheels are and where their
// index goes (WHEELS/simple unless DIR is given), both absolute.
struct SimpleIndexPlace {
  std::filesystem::path wheels;
  std::filesystem::path index;
};
// WHEELS/simple, archbuild's own name, may not be a symbolic link (archbuild
// follows no link below WHEELS); a DIR the user names may.
SimpleIndexPlace simple_index_place(const std::string& wheels_dir, const std::string& index_dir);

}  // namespace archbuild
