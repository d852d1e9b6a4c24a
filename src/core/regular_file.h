#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace archbuild {

// Files read back from directories others can write to (a shared cache, a
// store entry, index pages): opened with O_NONBLOCK so a FIFO planted there
// does not block the open, checked with fstat on the descriptor (what is
// checked is what is read), read with a size cap.

// "" with `content` holding the file when it is a regular file of at most
// `cap` bytes; else why not ("is a FIFO, not a regular file", "cannot be
// opened: ...", "is larger than 16 MiB, ..."), to follow the file's name.
std::string read_regular_file(const std::filesystem::path& path, uint64_t cap, std::string& content);

// sha256 of a regular file into `hex`, or why it was not read (as above).
std::string hash_regular_file(const std::filesystem::path& path, std::string& hex);

// A file archbuild wrote itself (a store entry's key.txt, manifest.json):
// nullopt when there is none; a symbolic link, a FIFO, a device, a directory
// or more than `cap` bytes is refused (exit 2, naming the path).
std::optional<std::string> read_own_file(const std::filesystem::path& path, uint64_t cap);

// Creates or truncates `path` (never through a symbolic link) and writes
// `content`, checking every write and the close: a full disk is an error
// here, not a short file later. Throws std::filesystem::filesystem_error
// with the errno, naming the path.
void write_whole_file(const std::filesystem::path& path, std::string_view content);

// Copies the regular file `from` to `to` (created or truncated, never
// through a symbolic link, with `from`'s permission bits). Unlike
// std::filesystem::copy_file, whose libstdc++ reports a full disk as EIO,
// the filesystem_error it throws carries the errno (ENOSPC), naming the path.
void copy_whole_file(const std::filesystem::path& from, const std::filesystem::path& to);

// A filesystem error while writing under `where`: a full disk (ENOSPC,
// EDQUOT) becomes UserError(environment) saying "no space left on WHERE";
// any other error is rethrown as it is.
[[noreturn]] void fail_writing(const std::filesystem::filesystem_error& error, const std::filesystem::path& where);

}  // namespace archbuild
