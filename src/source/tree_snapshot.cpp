#include "source/tree_snapshot.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include "core/error.h"
#include "core/file_lock.h"
#include "core/path_policy.h"
#include "core/sha256.h"
#include "core/strings.h"
#include "source/git_session.h"
#include "source/patch_apply.h"

namespace archbuild {

namespace {

using GitStatusList = GitPtr<git_status_list, git_status_list_free>;

std::string read_link(const std::filesystem::path& path) {
  std::error_code ec;
  auto target = std::filesystem::read_symlink(path, ec);
  if (ec) fail_bad_input("cannot read the symlink " + path.string() + ": " + ec.message());
  return target.string();
}

// One path of the snapshot, read from disk without following a symlink.
struct DiskEntry {
  uint32_t mode = 0;  // GIT_FILEMODE_*; 0: absent
  git_oid id{};
  uint64_t size = 0;
};

DiskEntry read_disk_entry(git_repository* mirror, const std::filesystem::path& root, const std::string& path,
                          const std::string& what) {
  DiskEntry entry;
  const auto full = root / path;
  struct stat info {};
  if (lstat(full.c_str(), &info) != 0) return entry;  // deleted
  if (S_ISLNK(info.st_mode)) {
    const std::string target = read_link(full);
    const std::string problem = symlink_target_problem(path, target);
    if (!problem.empty())
      fail_bad_input(what + ": the symlink '" + path + "' -> '" + target + "' " + problem +
                     "; a build of the tree as it is on disk takes only what is inside it");
    git_check(git_blob_create_from_buffer(&entry.id, mirror, target.data(), target.size()),
              "cannot store the symlink " + full.string());
    entry.mode = GIT_FILEMODE_LINK;
    entry.size = target.size();
  } else if (S_ISREG(info.st_mode)) {
    git_check(git_blob_create_from_disk(&entry.id, mirror, full.c_str()), "cannot read " + full.string());
    entry.mode = (info.st_mode & S_IXUSR) ? GIT_FILEMODE_BLOB_EXECUTABLE : GIT_FILEMODE_BLOB;
    entry.size = static_cast<uint64_t>(info.st_size);
  } else if (!S_ISDIR(info.st_mode)) {
    fail_bad_input(what + ": '" + path + "' is neither a file, a directory nor a symlink (a socket, fifo or device)");
  }
  return entry;
}

void add_to_index(git_index* index, const std::string& path, const DiskEntry& entry) {
  git_index_entry item{};
  item.path = path.c_str();
  item.mode = entry.mode;
  item.id = entry.id;
  item.file_size = static_cast<uint32_t>(std::min<uint64_t>(entry.size, UINT32_MAX));
  git_check(git_index_add(index, &item), "cannot add " + path + " to the snapshot");
}

// Commits `tree_id` to `repo` with a fixed author and time, so that the same
// files on the same base are the same commit on every run, and keeps it
// reachable under refs/archbuild/snapshots/.
std::string commit_snapshot(git_repository* repo, const git_oid& tree_id, git_commit* parent,
                            const std::string& message) {
  git_tree* raw_tree = nullptr;
  git_check(git_tree_lookup(&raw_tree, repo, &tree_id), "cannot read the snapshot's tree");
  GitTree tree(raw_tree);
  git_signature* signature = nullptr;
  git_check(git_signature_new(&signature, "archbuild", "archbuild@localhost", 0, 0), "cannot make a signature");
  std::unique_ptr<git_signature, void (*)(git_signature*)> signature_holder(signature, git_signature_free);
  const git_commit* parents[] = {parent};
  git_oid commit_id;
  git_check(git_commit_create(&commit_id, repo, nullptr, signature, signature, "UTF-8", message.c_str(), tree.get(),
                              parent ? 1 : 0, parent ? parents : nullptr),
            "cannot commit the snapshot");
  const std::string hex = oid_hex(commit_id);
  git_reference* ref = nullptr;
  git_check(git_reference_create(&ref, repo, ("refs/archbuild/snapshots/" + hex).c_str(), &commit_id, 1,
                                 "archbuild snapshot"),
            "cannot keep the snapshot " + hex);
  git_reference_free(ref);
  return hex;
}

Repository open_or_create_mirror(const std::filesystem::path& mirror) {
  ensure_libgit2();
  git_repository* raw = nullptr;
  if (git_repository_open_bare(&raw, mirror.c_str()) != 0) {
    std::filesystem::create_directories(mirror.parent_path());
    git_check(git_repository_init(&raw, mirror.c_str(), /*is_bare=*/1), "cannot create mirror " + mirror.string());
  }
  return Repository(raw);
}

void check_limits(const SnapshotLimits& limits, size_t files, uint64_t bytes, const std::string& what) {
  if (files > limits.max_files)
    fail_bad_input(what + " holds more than " + std::to_string(limits.max_files) +
                   " files to take (a virtualenv or a dataset inside it?); build a git commit of it, or move them out");
  if (bytes > limits.max_bytes)
    fail_bad_input(what + " holds more than " + std::to_string(limits.max_bytes >> 20) +
                   " MiB to take; build a git commit of it, or move the large files out");
}

}  // namespace

bool is_vcs_metadata_name(const std::string& component) {
  const auto lower = to_lower(component);
  return lower == ".git" || lower == ".hg" || lower == ".svn" || lower == ".bzr";
}

nlohmann::json LocalSnapshot::to_json() const {
  nlohmann::json out = {{"kind", kind_name()}, {"path", path}, {"commit", commit}};
  if (kind == Kind::working_tree) {
    out["base_commit"] = base_commit;
    out["base"] = base_description;
    out["edits_sha256"] = edits_sha256;
    out["edited"] = edited;
  } else {
    out["files"] = files;
    out["dropped"] = dropped;
  }
  return out;
}

LocalSnapshot LocalSnapshot::from_json(const nlohmann::json& json) {
  LocalSnapshot snapshot;
  snapshot.kind = json.value("kind", "") == "working tree" ? Kind::working_tree : Kind::directory;
  snapshot.path = json.value("path", "");
  snapshot.commit = json.value("commit", "");
  snapshot.base_commit = json.value("base_commit", "");
  snapshot.base_description = json.value("base", "");
  snapshot.edits_sha256 = json.value("edits_sha256", "");
  snapshot.edited = json.value("edited", std::vector<std::string>{});
  snapshot.files = json.value("files", size_t{0});
  snapshot.dropped = json.value("dropped", std::vector<std::string>{});
  return snapshot;
}

std::optional<LocalSnapshot> snapshot_working_tree(const std::filesystem::path& repo_root,
                                                   const std::filesystem::path& mirror_path,
                                                   const SnapshotLimits& limits) {
  ensure_libgit2();
  const std::string what = "the working tree " + repo_root.string();
  Repository user = open_repository(repo_root.string());
  if (git_repository_is_bare(user.get())) return std::nullopt;
  git_status_options options = GIT_STATUS_OPTIONS_INIT;
  options.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
  options.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS |
                  GIT_STATUS_OPT_EXCLUDE_SUBMODULES | GIT_STATUS_OPT_DISABLE_PATHSPEC_MATCH;
  git_status_list* list = nullptr;
  git_check(git_status_list_new(&list, user.get(), &options), "cannot read the status of " + repo_root.string());
  GitStatusList statuses(list);
  std::set<std::string> paths;
  for (size_t i = 0; i < git_status_list_entrycount(statuses.get()); ++i) {
    const git_status_entry* entry = git_status_byindex(statuses.get(), i);
    if (entry->status == GIT_STATUS_CURRENT || (entry->status & GIT_STATUS_IGNORED)) continue;
    for (const git_diff_delta* delta : {entry->head_to_index, entry->index_to_workdir}) {
      if (!delta) continue;
      for (const char* path : {delta->old_file.path, delta->new_file.path})
        if (path && *path && std::string(path).back() != '/') paths.insert(path);  // "dir/": a nested repository
    }
  }
  if (paths.empty()) return std::nullopt;

  git_reference* head_raw = nullptr;
  git_check(git_repository_head(&head_raw, user.get()), "cannot read HEAD of " + repo_root.string());
  GitReference head(head_raw);
  const git_oid* head_id = git_reference_target(head.get());
  if (!head_id) fail_bad_input(what + ": HEAD does not name a commit");

  Repository mirror = open_or_create_mirror(mirror_path);
  FileLock lock(mirror_path.string() + ".lock");  // the lock MirrorCache takes for this mirror
  git_commit* raw_base = nullptr;
  git_check(git_commit_lookup(&raw_base, mirror.get(), head_id),
            "the mirror " + mirror_path.string() + " does not hold HEAD of " + repo_root.string());
  GitCommit base(raw_base);
  git_tree* raw_base_tree = nullptr;
  git_check(git_commit_tree(&raw_base_tree, base.get()), "cannot read the tree of HEAD");
  GitTree base_tree(raw_base_tree);
  git_index* raw_index = nullptr;
  git_check(git_index_new(&raw_index), "cannot make an index");
  GitIndex index(raw_index);
  git_check(git_index_read_tree(index.get(), base_tree.get()), "cannot read the tree of HEAD");

  LocalSnapshot snapshot;
  snapshot.kind = LocalSnapshot::Kind::working_tree;
  snapshot.path = repo_root.string();
  snapshot.base_commit = oid_hex(*head_id);
  Sha256 digest;
  uint64_t bytes = 0;
  for (const auto& path : paths) {
    const std::string problem = relative_path_problem(path);
    if (!problem.empty()) fail_bad_input(what + ": the path '" + path + "' " + problem);
    const auto entry = read_disk_entry(mirror.get(), repo_root, path, what);
    if (entry.mode == 0) {
      git_index_remove(index.get(), path.c_str(), 0);  // absent from HEAD too: nothing to remove
    } else if (entry.mode != 0) {
      add_to_index(index.get(), path, entry);
    }
    bytes += entry.size;
    check_limits(limits, paths.size(), bytes, what);
    const std::string line = entry.mode == 0 ? "deleted " + path
                                             : std::to_string(entry.mode) + " " + oid_hex(entry.id) + " " + path;
    digest.update(line.data(), line.size());
    digest.update("\n", 1);
    snapshot.edited.push_back(path);
  }
  git_oid tree_id;
  git_check(git_index_write_tree_to(&tree_id, index.get(), mirror.get()), "cannot write the snapshot's tree");
  if (git_oid_equal(&tree_id, git_tree_id(base_tree.get()))) return std::nullopt;  // only stat information differed
  snapshot.edits_sha256 = digest.hex();
  snapshot.commit = commit_snapshot(mirror.get(), tree_id, base.get(),
                                    "archbuild: " + repo_root.filename().string() +
                                        " as it is on disk\n\nedits-sha256: " + snapshot.edits_sha256 + "\n");
  return snapshot;
}

LocalSnapshot snapshot_directory(const std::filesystem::path& dir, const std::filesystem::path& mirror_path,
                                 const SnapshotLimits& limits) {
  const std::string what = "the directory " + dir.string();
  Repository mirror = open_or_create_mirror(mirror_path);
  FileLock lock(mirror_path.string() + ".lock");
  git_index* raw_index = nullptr;
  git_check(git_index_new(&raw_index), "cannot make an index");
  GitIndex index(raw_index);
  LocalSnapshot snapshot;
  snapshot.kind = LocalSnapshot::Kind::directory;
  snapshot.path = dir.string();
  uint64_t bytes = 0;
  std::error_code ec;
  std::filesystem::recursive_directory_iterator it(dir, std::filesystem::directory_options::none, ec), end;
  const auto base = dir.has_filename() ? dir : dir.parent_path();  // "DIR/" as "DIR": entries are DIR/NAME
  if (ec) fail_bad_input("cannot read " + what + ": " + ec.message());
  std::vector<std::string> paths;
  for (; it != end; it.increment(ec)) {
    if (ec) fail_bad_input("cannot read " + what + ": " + ec.message());
    // lexically: relative() would resolve a symlink to the directory it names, and
    // store the link under its target's path
    const std::string path = it->path().lexically_relative(base).generic_string();
    const std::string name = it->path().filename().string();
    if (is_vcs_metadata_name(name)) {
      snapshot.dropped.push_back(path);
      if (it->is_directory(ec) && !it->is_symlink(ec)) it.disable_recursion_pending();
      continue;
    }
    if (it->is_directory(ec) && !it->is_symlink(ec)) continue;  // git holds no directories of their own
    paths.push_back(path);
    const std::string problem = relative_path_problem(path);
    if (!problem.empty()) fail_bad_input(what + ": the path '" + path + "' " + problem);
    // Counted before the file is read (one 4.5 GiB file is refused, not
    // copied), and again with what was read (a file that grew meanwhile).
    const auto status = it->symlink_status(ec);
    const uint64_t listed = std::filesystem::is_regular_file(status) ? it->file_size(ec) : 0;
    check_limits(limits, paths.size(), bytes + (ec ? 0 : listed), what);
    const auto entry = read_disk_entry(mirror.get(), dir, path, what);
    if (entry.mode == 0) fail_bad_input(what + " changed while archbuild read it ('" + path + "' is gone)");
    bytes += entry.size;
    check_limits(limits, paths.size(), bytes, what);
    add_to_index(index.get(), path, entry);
  }
  if (paths.empty()) fail_bad_input(what + " holds no files to build");
  snapshot.files = paths.size();
  std::sort(snapshot.dropped.begin(), snapshot.dropped.end());
  git_oid tree_id;
  git_check(git_index_write_tree_to(&tree_id, index.get(), mirror.get()), "cannot write the snapshot's tree");
  snapshot.commit = commit_snapshot(mirror.get(), tree_id, nullptr,
                                    "archbuild: " + dir.filename().string() + " as it is on disk\n");
  return snapshot;
}

}  // namespace archbuild
