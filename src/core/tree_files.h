#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace archbuild {

// Why a symlink at `link` (a path inside the tree) with this target could
// lead out of the tree ("" when it cannot): the target is empty, absolute,
// or climbs above the top, read lexically from the link's directory.
std::string symlink_target_problem(std::string_view link, std::string_view target);

// A directory tree archbuild manages, every path reached from one open
// directory one component at a time without following a symlink: what it
// writes or removes cannot land outside, whatever the tree holds. Paths are
// relative to the root; one with an empty, `.` or `..` component is refused.
class TreeFiles {
 public:
  enum class Kind { absent, directory, file, symlink, other };

  explicit TreeFiles(const std::filesystem::path& root);  // the root itself is opened as given
  ~TreeFiles();
  TreeFiles(const TreeFiles&) = delete;
  TreeFiles& operator=(const TreeFiles&) = delete;

  const std::filesystem::path& root() const { return root_; }
  // The first proper prefix of `relative` that exists and is not a directory
  // ("" when there is none), and what it is.
  std::string blocked_prefix(std::string_view relative, Kind* kind = nullptr) const;
  // `relative` itself, never followed; absent when a prefix is not a directory.
  Kind kind(std::string_view relative) const;
  // Every entry below the directory `relative` that is not a directory.
  std::vector<std::string> files_below(std::string_view relative) const;
  // Written aside and renamed into place (so a symlink there is replaced, not
  // followed); missing directories are created.
  void write_file(std::string_view relative, std::string_view content, bool executable = false) const;
  void write_symlink(std::string_view relative, std::string_view target) const;
  // A file or symlink; false when absent, a directory, or behind a non-directory.
  bool remove_file(std::string_view relative) const;
  // Anything, a directory with all it holds; false when absent or behind a non-directory.
  bool remove(std::string_view relative) const;
  // The directories above `relative` that are empty, deepest first; never the root.
  void remove_empty_parents(std::string_view relative) const;

 private:
  int open_parent(const std::vector<std::string>& parts, bool create, std::string* blocked, Kind* kind) const;
  // open_parent(create) for a write to `where`, or the error naming what is in the way.
  int open_parent_for_write(const std::vector<std::string>& parts, const std::string& where) const;

  int fd_ = -1;
  std::filesystem::path root_;
};

// "a", "a/b" for "a/b/c": the directories a write to the path goes through.
std::vector<std::string> proper_prefixes(const std::string& path);
// "nothing", "a directory", "a file", "a symlink", "a special file".
const char* kind_word(TreeFiles::Kind kind);

}  // namespace archbuild
