#include "source/patch_apply.h"

#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/sha256.h"

namespace archbuild {

namespace {

struct LoadedPatch {
  PatchFile file;
  std::string text;
  GitDiff diff;
};

// Rejects paths that would write outside the work tree.
void check_path(const std::filesystem::path& workdir, const std::string& patch, const char* path) {
  if (!path || !*path) return;
  std::string text = path;
  auto escape = [&](const std::string& why) {
    fail_bad_input("patch " + patch + " writes outside the source tree: '" + text + "' " + why);
  };
  if (text.front() == '/') escape("is an absolute path");
  std::filesystem::path relative(text);
  std::filesystem::path walked = workdir;
  for (const auto& part : relative) {
    if (part == "..") escape("climbs out with '..'");
    walked /= part;
    std::error_code ec;
    if (std::filesystem::is_symlink(walked, ec)) escape("goes through the symlink " + walked.string());
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
  fail_bad_input("patch " + patch.file.path.string() + " does not apply" + where + ": " + git_last_error());
}

}  // namespace

std::vector<AppliedPatch> apply_patches(git_repository* repo, const std::vector<PatchFile>& patches) {
  std::vector<AppliedPatch> applied;
  if (patches.empty()) return applied;
  const char* workdir_text = git_repository_workdir(repo);
  if (!workdir_text) fail_bad_input("cannot patch a bare repository");
  std::filesystem::path workdir(workdir_text);

  std::vector<LoadedPatch> loaded;
  for (const auto& file : patches) {
    std::ifstream in(file.path, std::ios::binary);
    if (!in) fail_bad_input("cannot read patch " + file.path.string());
    std::stringstream buffer;
    buffer << in.rdbuf();
    LoadedPatch patch{file, buffer.str(), nullptr};
    git_diff* diff = nullptr;
    if (git_diff_from_buffer(&diff, patch.text.data(), patch.text.size()) != 0)
      fail_bad_input("patch " + file.path.string() +
                     " is not a git-format patch (git diff / git format-patch): " + git_last_error());
    patch.diff.reset(diff);
    if (git_diff_num_deltas(diff) == 0) fail_bad_input("patch " + file.path.string() + " changes nothing");
    for (size_t i = 0; i < git_diff_num_deltas(diff); ++i) {
      const git_diff_delta* delta = git_diff_get_delta(diff, i);
      check_path(workdir, file.path.string(), delta->old_file.path);
      check_path(workdir, file.path.string(), delta->new_file.path);
    }
    loaded.push_back(std::move(patch));
  }

  // Check: apply each to the tree the previous ones produced, in memory.
  git_object* head = nullptr;
  git_check(git_revparse_single(&head, repo, "HEAD^{tree}"), "cannot read HEAD's tree");
  GitObject head_holder(head);
  GitTree tree(reinterpret_cast<git_tree*>(head_holder.release()));
  for (const auto& patch : loaded) {
    HunkTracker tracker;
    auto options = tracking_options(tracker);
    git_index* index = nullptr;
    if (git_apply_to_tree(&index, repo, tree.get(), patch.diff.get(), &options) != 0) apply_failed(patch, tracker);
    GitIndex index_holder(index);
    git_oid tree_id;
    git_check(git_index_write_tree_to(&tree_id, index, repo), "cannot write the patched tree");
    git_tree* next = nullptr;
    git_check(git_tree_lookup(&next, repo, &tree_id), "cannot read the patched tree");
    tree.reset(next);
  }

  // Apply: all patches are known to apply in order.
  for (const auto& patch : loaded) {
    HunkTracker tracker;
    auto options = tracking_options(tracker);
    if (git_apply(repo, patch.diff.get(), GIT_APPLY_LOCATION_WORKDIR, &options) != 0) apply_failed(patch, tracker);
    AppliedPatch record{patch.file.path.string(), patch.file.origin, sha256_hex(patch.text), {}};
    for (size_t i = 0; i < git_diff_num_deltas(patch.diff.get()); ++i) {
      const git_diff_delta* delta = git_diff_get_delta(patch.diff.get(), i);
      if (delta->status == GIT_DELTA_ADDED) record.created.emplace_back(delta->new_file.path);
    }
    applied.push_back(std::move(record));
  }
  return applied;
}

}  // namespace archbuild
