#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "core/unique_fd.h"

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

// Every file archbuild writes goes through the writers below (CI refuses a
// raw std::ofstream outside src/core/: scripts/check-raw-writes.sh). None
// opens through a symbolic link or blocks on a FIFO planted where it
// writes; each checks every write and the close: a full disk is an error
// here, not a short file later. Each throws std::filesystem::filesystem_error
// with the errno, naming the path (fail_writing turns a full disk into its
// message).

// Creates or truncates `path` (never through a symbolic link) and writes
// `content`. For a file no one reads while it is written (a log, a scratch
// file); else write_file_atomically.
void write_whole_file(const std::filesystem::path& path, std::string_view content);

// Writes `content` to a new file beside `path` (a unique hidden name in the
// same directory), fsyncs it and renames it over `path`: a reader (another
// build, the next run after a crash) sees the old file or the new one, never
// half of one. A symbolic link at `path` is replaced, never followed. The new
// file gets exactly `perms` when given, else 0644 less the umask. On any
// failure the temporary file is removed and `path` is left as it was.
void write_file_atomically(const std::filesystem::path& path, std::string_view content,
                           std::optional<std::filesystem::perms> perms = std::nullopt);

// Points the symbolic link `link` at `target`: made beside it under a unique
// hidden name and renamed over it, so a build beside this one sees the old
// link or the new one, never none. Nothing is done when `link` already
// points there. Throws filesystem_error naming `link`.
void place_symlink(const std::filesystem::path& target, const std::filesystem::path& link);

// place_symlink for a link a build cannot go on without (a launcher shim, a
// library's unversioned name): a failure there is this machine's (a full or
// read-only disk), reported as an environment error naming the link.
void place_needed_symlink(const std::filesystem::path& target, const std::filesystem::path& link);

// A file written a piece at a time (a build log appended line by line, a
// JUnit report). Each write goes straight to the file (no buffer to lose at
// a crash) and is checked, and so is close(). The destructor closes a file
// still open without a check: call close() to learn of a late failure.
class OutputFile {
 public:
  static OutputFile create(const std::filesystem::path& path);  // created or truncated
  static OutputFile append(const std::filesystem::path& path);  // created, or written at its end (O_APPEND)

  void write(std::string_view text);
  void close();
  bool is_open() const { return static_cast<bool>(fd_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  OutputFile(std::filesystem::path path, int flags);
  std::filesystem::path path_;
  UniqueFd fd_;
};

// A stdio stream for a log others print into with fprintf (the status line
// of a matrix cell's log): created or truncated, never through a symbolic
// link. The caller fcloses it. Throws filesystem_error naming the path.
std::FILE* open_output_stream(const std::filesystem::path& path);

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
