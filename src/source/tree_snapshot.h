#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace archbuild {

// A directory built as it is on disk, as pip builds it: its files made a
// commit of archbuild's mirror for that path, so that the build, the cache
// key and the manifest all name one exact tree. The directory itself is
// only read.
struct LocalSnapshot {
  enum class Kind { working_tree, directory };
  Kind kind = Kind::directory;
  std::string path;                  // what was snapshotted (a machine path: manifest and report, never the key)
  std::string commit;                // the snapshot: parent base_commit for a working tree, none for a directory
  std::string base_commit;           // a working tree's HEAD; "" for a directory
  std::string base_description;      // "branch main at 1a2b3c4d5e6f"
  std::string edits_sha256;          // a working tree's: of every path that differs from HEAD, with its content
  std::vector<std::string> edited;   // those paths (changed, untracked and not ignored, deleted), sorted
  size_t files = 0;                  // a directory's: files and symlinks taken
  std::vector<std::string> dropped;  // a directory's: VCS metadata left out (.hg, .svn, a .git file)

  std::string kind_name() const { return kind == Kind::working_tree ? "working tree" : "directory"; }
  nlohmann::json to_json() const;
  static LocalSnapshot from_json(const nlohmann::json& json);
};

// What a snapshot may take: a directory with a virtualenv or a dataset in
// it is refused before it fills the cache.
struct SnapshotLimits {
  uint64_t max_bytes = 4ull << 30;
  size_t max_files = 200000;
};

// The working tree of the repository at `repo_root` as it is on disk:
// HEAD's tree with tracked changes (staged or not), deletions and untracked
// files that .gitignore does not ignore; submodules stay at the commits
// HEAD records. Written to the bare repository `mirror`, which must already
// hold HEAD. nullopt when nothing differs from HEAD (then HEAD is built).
// Throws UserError(bad_input) for an edited path that is no file or symlink
// or a symlink that leads out of the tree (the key covers only the tree).
std::optional<LocalSnapshot> snapshot_working_tree(const std::filesystem::path& repo_root,
                                                   const std::filesystem::path& mirror,
                                                   const SnapshotLimits& limits = {});

// Every file and symlink under `dir` (no repository) as a parentless commit
// of the bare repository `mirror` (created when absent). VCS metadata
// (.hg, .svn, .bzr, a .git file a submodule leaves) is dropped and named;
// sockets, devices and symlinks out of the tree are refused.
LocalSnapshot snapshot_directory(const std::filesystem::path& dir, const std::filesystem::path& mirror,
                                 const SnapshotLimits& limits = {});

// Whether a path component is a version-control system's metadata
// (.git, .hg, .svn, .bzr, in any case): what sdists and directory
// snapshots leave out.
bool is_vcs_metadata_name(const std::string& component);

}  // namespace archbuild
