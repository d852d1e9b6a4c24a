#include "source/patch_apply.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <functional>
#include <set>
#include <utility>

#include "core/error.h"
#include "core/regular_file.h"
#include "core/sha256.h"
#include "core/unique_fd.h"

namespace archbuild {

namespace {

// A patch is read whole into memory and parsed there by libgit2; a recipe's
// patches are KiBs, so one larger than this is a mistake (a tarball, a log).
constexpr uint64_t kMaxPatchBytes = 64u << 20;

struct LoadedPatch {
  PatchFile file;
  std::string text;
  GitDiff diff;
};

std::string patch_name(const LoadedPatch& patch) { return patch.file.path.string(); }

// The mode of `path` in `tree`; 0 when it has none.
uint32_t mode_at(git_tree* tree, const std::string& path) {
  git_tree_entry* entry = nullptr;
  if (git_tree_entry_bypath(&entry, tree, path.c_str()) != 0) return 0;
  uint32_t mode = git_tree_entry_filemode(entry);
  git_tree_entry_free(entry);
  return mode;
}

std::string blob_text(git_repository* repo, git_tree* tree, const std::string& path) {
  git_tree_entry* entry = nullptr;
  if (git_tree_entry_bypath(&entry, tree, path.c_str()) != 0) return "";
  git_blob* blob = nullptr;
  int rc = git_blob_lookup(&blob, repo, git_tree_entry_id(entry));
  git_tree_entry_free(entry);
  if (rc != 0) return "";
  std::string text(static_cast<const char*>(git_blob_rawcontent(blob)), static_cast<size_t>(git_blob_rawsize(blob)));
  git_blob_free(blob);
  return text;
}

std::vector<std::string> delta_paths(const git_diff_delta* delta) {
  std::vector<std::string> paths;
  for (const char* path : {delta->old_file.path, delta->new_file.path})
    if (path && *path && std::find(paths.begin(), paths.end(), path) == paths.end()) paths.emplace_back(path);
  return paths;
}

// The path a delta writes; "" for a deletion (its old path goes before anything is written).
std::string written_path(const git_diff_delta* delta) {
  return delta->status == GIT_DELTA_DELETED || !delta->new_file.path ? "" : delta->new_file.path;
}

// The patches in order and the tree before each: states[i] is what patch i is applied to.
struct Chain {
  git_repository* repo;
  const std::vector<LoadedPatch>& patches;
  std::vector<GitTree> states;
  const TreeFiles& disk;
};

[[noreturn]] void refuse_through(const LoadedPatch& patch, const std::string& path, const std::string& link,
                                 const std::string& origin) {
  fail_bad_input("patch " + patch_name(patch) + " writes through a symlink: '" + path + "' passes through '" + link +
                 "', " + origin + "; archbuild never writes through a symlink");
}

[[noreturn]] void refuse_submodule(const LoadedPatch& patch, const std::string& path, const std::string& submodule) {
  fail_bad_input("patch " + patch_name(patch) + " changes '" + path + "', inside the submodule '" + submodule +
                 "'; patches apply to the top repository's own files");
}

// Who made the symlink at `path` that the tree before patch `index` holds.
std::string symlink_origin(const Chain& chain, size_t index, const std::string& path) {
  for (size_t i = index; i > 0; --i)
    if (mode_at(chain.states[i - 1].get(), path) != GIT_FILEMODE_LINK)
      return "a symlink made by patch " + patch_name(chain.patches[i - 1]);
  return "a symlink in the checked-out tree";
}

std::set<std::string> added_links(const LoadedPatch& patch) {
  std::set<std::string> links;
  for (size_t i = 0; i < git_diff_num_deltas(patch.diff.get()); ++i) {
    const git_diff_delta* delta = git_diff_get_delta(patch.diff.get(), i);
    if (delta->status != GIT_DELTA_DELETED && delta->new_file.mode == GIT_FILEMODE_LINK && delta->new_file.path)
      links.insert(delta->new_file.path);
  }
  return links;
}

std::set<std::string> deleted_paths(const LoadedPatch& patch) {
  std::set<std::string> deleted;
  for (size_t i = 0; i < git_diff_num_deltas(patch.diff.get()); ++i) {
    const git_diff_delta* delta = git_diff_get_delta(patch.diff.get(), i);
    if (delta->status == GIT_DELTA_DELETED && delta->old_file.path) deleted.insert(delta->old_file.path);
  }
  return deleted;
}

// Every path patch `index` touches, against the tree the earlier patches
// leave, the work tree on disk and the symlinks the patch itself adds. A
// symlink the patch deletes may become a directory it writes into: the
// symlink is removed before anything is written.
void check_before(const Chain& chain, size_t index) {
  const LoadedPatch& patch = chain.patches[index];
  git_tree* before = chain.states[index].get();
  git_tree* head = chain.states.front().get();
  auto links = added_links(patch);
  auto deleted = deleted_paths(patch);
  for (size_t i = 0; i < git_diff_num_deltas(patch.diff.get()); ++i) {
    const git_diff_delta* delta = git_diff_get_delta(patch.diff.get(), i);
    for (const auto& path : delta_paths(delta)) {
      bool written = path == written_path(delta);
      for (const auto& prefix : proper_prefixes(path)) {
        if (written && links.count(prefix)) refuse_through(patch, path, prefix, "a symlink made by this patch");
        uint32_t mode = mode_at(before, prefix);
        if (mode == GIT_FILEMODE_LINK && !(written && deleted.count(prefix)))
          refuse_through(patch, path, prefix, symlink_origin(chain, index, prefix));
        if (mode == GIT_FILEMODE_COMMIT) refuse_submodule(patch, path, prefix);
        // A symlink the checked-out tree has is judged by the tree above, as the patches change it.
        if (mode_at(head, prefix) != GIT_FILEMODE_LINK && chain.disk.kind(prefix) == TreeFiles::Kind::symlink)
          refuse_through(patch, path, prefix, "an untracked symlink in the work tree");
      }
      if (mode_at(before, path) == GIT_FILEMODE_COMMIT || delta->old_file.mode == GIT_FILEMODE_COMMIT ||
          delta->new_file.mode == GIT_FILEMODE_COMMIT)
        refuse_submodule(patch, path, path);
    }
  }
}

// What a patch did to the tree: the paths it added (untracked once written)
// and the symlinks it added or changed, however its deltas spell their modes.
struct TreeChange {
  std::vector<std::string> added;
  std::vector<std::string> links;
};

TreeChange tree_change(git_repository* repo, git_tree* before, git_tree* after) {
  git_diff* raw = nullptr;
  git_check(git_diff_tree_to_tree(&raw, repo, before, after, nullptr), "cannot compare the patched trees");
  GitDiff diff(raw);
  TreeChange change;
  for (size_t i = 0; i < git_diff_num_deltas(raw); ++i) {
    const git_diff_delta* delta = git_diff_get_delta(raw, i);
    if (delta->status == GIT_DELTA_DELETED) continue;
    if (delta->status == GIT_DELTA_ADDED) change.added.emplace_back(delta->new_file.path);
    if (delta->new_file.mode == GIT_FILEMODE_LINK) change.links.emplace_back(delta->new_file.path);
  }
  return change;
}

// The same against the tree this patch makes, and where its symlinks point.
TreeChange check_after(const Chain& chain, size_t index) {
  const LoadedPatch& patch = chain.patches[index];
  git_tree* after = chain.states[index + 1].get();
  for (size_t i = 0; i < git_diff_num_deltas(patch.diff.get()); ++i) {
    std::string path = written_path(git_diff_get_delta(patch.diff.get(), i));
    if (!path.empty())
      for (const auto& prefix : proper_prefixes(path)) {
        uint32_t mode = mode_at(after, prefix);
        if (mode == GIT_FILEMODE_LINK) refuse_through(patch, path, prefix, "a symlink made by this patch");
        if (mode == GIT_FILEMODE_COMMIT) refuse_submodule(patch, path, prefix);
      }
  }
  TreeChange change = tree_change(chain.repo, chain.states[index].get(), after);
  for (const auto& link : change.links) {
    std::string target = blob_text(chain.repo, after, link);
    std::string problem = symlink_target_problem(link, target);
    if (!problem.empty())
      fail_bad_input("patch " + patch_name(patch) + " makes the symlink '" + link + "' -> '" + target +
                     "', whose target " + problem +
                     "; a patch may add only relative symlinks that stay inside the source tree");
  }
  return change;
}

struct PendingWrite {
  std::string path;
  uint32_t mode;
  git_oid id;
  bool tracked;  // the checked-out tree has it with the same type: it is replaced
};

std::string file_content(git_repository* repo, const PendingWrite& write) {
  git_blob* raw = nullptr;
  git_check(git_blob_lookup(&raw, repo, &write.id), "cannot read the patched " + write.path);
  GitPtr<git_blob, git_blob_free> blob(raw);
  if (write.mode == GIT_FILEMODE_LINK)
    return {static_cast<const char*>(git_blob_rawcontent(raw)), static_cast<size_t>(git_blob_rawsize(raw))};
  // The checkout's filters (line endings from .gitattributes), as libgit2's checkout applies them.
  git_buf buffer = GIT_BUF_INIT;
  git_blob_filter_options options = GIT_BLOB_FILTER_OPTIONS_INIT;
  git_check(git_blob_filter(&buffer, raw, write.path.c_str(), &options), "cannot filter the patched " + write.path);
  std::string content(buffer.ptr ? buffer.ptr : "", buffer.size);
  git_buf_dispose(&buffer);
  return content;
}

// Writes the difference between the checked-out tree and the patched one.
// Everything is checked before the first change, so a refusal leaves the
// work tree as it was; no write or removal follows a symlink.
void write_patched_tree(git_repository* repo, git_tree* head, git_tree* patched, const TreeFiles& disk) {
  git_diff* raw = nullptr;
  git_check(git_diff_tree_to_tree(&raw, repo, head, patched, nullptr), "cannot compare the patched tree");
  GitDiff diff(raw);
  std::set<std::string> removals;
  std::vector<PendingWrite> writes;
  for (size_t i = 0; i < git_diff_num_deltas(raw); ++i) {
    const git_diff_delta* delta = git_diff_get_delta(raw, i);
    if (delta->status == GIT_DELTA_DELETED)
      removals.insert(delta->old_file.path);
    else
      writes.push_back(
          {delta->new_file.path, delta->new_file.mode, delta->new_file.id, delta->status != GIT_DELTA_ADDED});
  }
  auto refuse = [](const std::string& path, const std::string& why) {
    fail_bad_input("the patches cannot be written to the work tree: '" + path + "' " + why +
                   "; remove it, or the work tree to start over");
  };
  for (const auto& write : writes) {
    for (const auto& prefix : proper_prefixes(write.path)) {
      if (removals.count(prefix)) break;  // a file the patches turn into a directory
      auto kind = disk.kind(prefix);
      if (kind == TreeFiles::Kind::absent) break;
      if (kind != TreeFiles::Kind::directory)
        refuse(write.path, "needs a directory where the work tree has " + std::string(kind_word(kind)) + " '" + prefix +
                               "' that no patch removes");
    }
    if (write.mode == GIT_FILEMODE_LINK && !symlink_target_problem(write.path, file_content(repo, write)).empty())
      refuse(write.path, "would be a symlink out of the tree");  // each patch's own check says which
    if (removals.count(write.path)) continue;
    auto kind = disk.kind(write.path);
    if (kind == TreeFiles::Kind::directory) {
      for (const auto& file : disk.files_below(write.path))
        if (!removals.count(file)) refuse(write.path, "is a directory in the work tree holding '" + file + "'");
    } else if (kind != TreeFiles::Kind::absent && !write.tracked) {
      refuse(write.path, "already exists in the work tree and is not tracked");
    }
  }
  for (const auto& path : removals) disk.remove_file(path);
  for (const auto& path : removals) disk.remove_empty_parents(path);
  for (const auto& write : writes) {
    std::string content = file_content(repo, write);
    if (disk.kind(write.path) == TreeFiles::Kind::directory) disk.remove(write.path);  // holds only directories
    if (write.mode == GIT_FILEMODE_LINK)
      disk.write_symlink(write.path, content);
    else
      disk.write_file(write.path, content, write.mode == GIT_FILEMODE_BLOB_EXECUTABLE);
  }
}

struct HunkTracker {
  std::string file;
  std::string hunk;
  int hunk_index = 0;
};

int on_delta(const git_diff_delta* delta, void* payload) {
  auto* tracker = static_cast<HunkTracker*>(payload);
  tracker->file = delta->new_file.path ? delta->new_file.path : delta->old_file.path;
  tracker->hunk.clear();
  tracker->hunk_index = 0;
  return 0;
}

int on_hunk(const git_diff_hunk* hunk, void* payload) {
  auto* tracker = static_cast<HunkTracker*>(payload);
  tracker->hunk.assign(hunk->header, hunk->header_len);
  while (!tracker->hunk.empty() && (tracker->hunk.back() == '\n' || tracker->hunk.back() == '\r'))
    tracker->hunk.pop_back();
  ++tracker->hunk_index;
  return 0;
}

git_apply_options tracking_options(HunkTracker& tracker) {
  git_apply_options options = GIT_APPLY_OPTIONS_INIT;
  options.delta_cb = on_delta;
  options.hunk_cb = on_hunk;
  options.payload = &tracker;
  return options;
}

[[noreturn]] void apply_failed(const LoadedPatch& patch, const HunkTracker& tracker) {
  std::string where = tracker.file.empty() ? "" : " in " + tracker.file;
  if (tracker.hunk_index > 0)
    where = ", hunk #" + std::to_string(tracker.hunk_index) + " (" + tracker.hunk + ")" + where;
  fail_bad_input("patch " + patch_name(patch) + " does not apply" + where + ": " + git_last_error());
}

}  // namespace

std::vector<AppliedPatch> apply_patches(git_repository* repo, const std::vector<PatchFile>& patches) {
  std::vector<AppliedPatch> applied;
  if (patches.empty()) return applied;
  const char* workdir_text = git_repository_workdir(repo);
  if (!workdir_text) fail_bad_input("cannot patch a bare repository");
  TreeFiles disk{std::filesystem::path(workdir_text)};

  std::vector<LoadedPatch> loaded;
  for (const auto& file : patches) {
    std::string text;
    if (auto why = read_regular_file(file.path, kMaxPatchBytes, text); !why.empty())
      fail_bad_input("patch " + file.path.string() + " " + why);
    LoadedPatch patch{file, std::move(text), nullptr};
    git_diff* diff = nullptr;
    if (git_diff_from_buffer(&diff, patch.text.data(), patch.text.size()) != 0)
      fail_bad_input("patch " + file.path.string() +
                     " is not a git-format patch (git diff / git format-patch): " + git_last_error());
    patch.diff.reset(diff);
    if (git_diff_num_deltas(diff) == 0) fail_bad_input("patch " + file.path.string() + " changes nothing");
    for (size_t i = 0; i < git_diff_num_deltas(diff); ++i)
      for (const auto& path : delta_paths(git_diff_get_delta(diff, i))) {
        std::string problem = relative_path_problem(path);
        if (!problem.empty())
          fail_bad_input("patch " + file.path.string() + " writes outside the source tree: '" + path + "' " + problem);
      }
    loaded.push_back(std::move(patch));
  }

  // Check: apply each to the tree the previous ones produced, in memory.
  git_object* head = nullptr;
  git_check(git_revparse_single(&head, repo, "HEAD^{tree}"), "cannot read HEAD's tree");
  Chain chain{repo, loaded, {}, disk};
  chain.states.emplace_back(reinterpret_cast<git_tree*>(head));
  for (size_t k = 0; k < loaded.size(); ++k) {
    const LoadedPatch& patch = loaded[k];
    check_before(chain, k);
    HunkTracker tracker;
    auto options = tracking_options(tracker);
    git_index* index = nullptr;
    git_error_clear();
    if (git_apply_to_tree(&index, repo, chain.states[k].get(), patch.diff.get(), &options) != 0)
      apply_failed(patch, tracker);
    GitIndex index_holder(index);
    git_oid tree_id;
    git_check(git_index_write_tree_to(&tree_id, index, repo), "cannot write the patched tree");
    git_tree* next = nullptr;
    git_check(git_tree_lookup(&next, repo, &tree_id), "cannot read the patched tree");
    chain.states.emplace_back(next);
    TreeChange change = check_after(chain, k);
    applied.push_back({patch_name(patch), patch.file.origin, sha256_hex(patch.text), std::move(change.added)});
  }

  // Write: all patches are known to apply in order and to stay inside the tree.
  write_patched_tree(repo, chain.states.front().get(), chain.states.back().get(), disk);
  return applied;
}

}  // namespace archbuild
