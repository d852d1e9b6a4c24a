#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "source/git_session.h"

namespace archbuild {

// An sdist (.tar.gz, .tgz, .tar or .zip) read as untrusted input. Nothing
// of it is ever unpacked onto disk: its members are checked first, all of
// them, and only then written, as git blobs and trees; the work tree is
// checked out from that commit like any other.

// What reading one sdist may cost: a gzip bomb or a million empty members
// is refused before it costs more.
struct SdistLimits {
  uint64_t max_download_bytes = 2ull << 30;  // the sdist file itself
  uint64_t max_unpacked_bytes = 4ull << 30;  // everything decompressed (tar: headers and padding too)
  uint64_t max_member_bytes = 1ull << 30;
  size_t max_members = 200000;
};

enum class MemberKind { file, directory, symlink, hardlink, unsupported };

// One member as the archive's header declares it.
struct ArchiveMember {
  std::string name;  // as the archive spells it
  MemberKind kind = MemberKind::file;
  std::string type;  // an unsupported member's kind: "character device", "fifo", ...
  bool executable = false;
  uint64_t size = 0;        // of a file's data
  std::string link_target;  // a symlink's target, or the member a hardlink names
};

// The members in archive order (data read through, not kept). Throws
// UserError(bad_input) naming the archive when it is unreadable, of no
// known format, or over the limits.
std::vector<ArchiveMember> list_sdist_members(const std::filesystem::path& archive, const SdistLimits& limits = {});

// One path of the tree an sdist becomes.
struct SdistTreeEntry {
  std::string path;   // in the tree: the sdist's one top-level directory stripped
  size_t member = 0;  // the member whose data it holds (for a hardlink, the file it names)
  bool symlink = false;
  bool executable = false;
  std::string link_target;
};

// The tree of `members`, checked: every name is relative and normalised
// (a leading "./" and a directory's trailing '/' aside) with no '..', no
// backslash or control character; a member under VCS metadata (a `.git`,
// `.hg`, `.svn` or `.bzr` component: the `.git` file a submodule leaves in
// a vendored directory) is left out, and its topmost path added to
// `dropped`; no path appears twice (directories
// aside) or lies inside a file or a symlink of the archive; a symlink's
// target is relative, stays inside the tree read lexically from its own
// directory, and passes through no other symlink; a hardlink names an
// earlier regular file; devices and fifos are refused. The sdist's single
// top-level directory (NAME-VERSION/) is stripped. Throws UserError(bad_input)
// "sdist NAME: member 'M' ...", naming the first refused member.
std::vector<SdistTreeEntry> sdist_tree(const std::vector<ArchiveMember>& members, const std::string& archive_name,
                                       std::vector<std::string>* dropped = nullptr);

// Writes the checked tree into `repo` (blobs and trees, nothing on disk) and
// returns the tree's id. Reads the archive again, which must still hold
// exactly `members`.
git_oid write_sdist_tree(git_repository* repo, const std::filesystem::path& archive,
                         const std::vector<ArchiveMember>& members, const std::vector<SdistTreeEntry>& tree,
                         const SdistLimits& limits = {});

// ".tar.gz", ".tgz", ".tar" or ".zip": the sdist formats archive reads.
bool is_sdist_file_name(const std::string& name);

}  // namespace archbuild
