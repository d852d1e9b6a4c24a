#include "source/source_tree.h"

#include <fstream>
#include <future>
#include <mutex>

#include "core/error.h"
#include "core/json_text.h"
#include "core/log.h"
#include "core/regular_file.h"
#include "core/secrets.h"
#include "source/git_session.h"
#include "source/project_dirs.h"

namespace archbuild {

std::filesystem::path source_manifest_path(const std::filesystem::path& dest) {
  return dest / ".git" / "archbuild-source.json";
}

nlohmann::json SdistOrigin::to_json() const {
  return {{"project", project}, {"version", version},      {"file", file}, {"url", url}, {"index", index},
          {"sha256", sha256},   {"index_hash", index_hash}};
}

SdistOrigin SdistOrigin::from_json(const nlohmann::json& json) {
  return {json.value("project", ""), json.value("version", ""), json.value("file", ""),         json.value("url", ""),
          json.value("index", ""),   json.value("sha256", ""),  json.value("index_hash", false)};
}

nlohmann::json SourceTree::to_json() const {
  auto subs = nlohmann::json::array();
  // Stored and published (the report, the manifest): a URL's userinfo (a CI
  // token in a clone URL) is not.
  for (const auto& sub : submodules)
    subs.push_back({{"path", sub.path}, {"url", secrets::scrub(sub.url)}, {"commit", sub.commit}});
  auto applied = nlohmann::json::array();
  for (const auto& patch : patches)
    applied.push_back(
        {{"file", patch.file}, {"origin", patch.origin}, {"sha256", patch.sha256}, {"created", patch.created}});
  nlohmann::json out = {{"dir", dir.string()},
                        {"url", secrets::scrub(url)},
                        {"fetch_url", secrets::scrub(fetch_url)},
                        {"ref", ref},
                        {"ref_kind", ref_kind},
                        {"commit", commit},
                        {"commit_time", commit_time},
                        {"submodules", subs},
                        {"patches", applied},
                        {"fetched", fetched},
                        {"reused", reused}};
  if (sdist) out["sdist"] = sdist->to_json();
  if (snapshot) out["snapshot"] = snapshot->to_json();
  if (!subdirectory.empty()) out["subdirectory"] = subdirectory;
  return out;
}

SourceTree SourceTree::from_json(const nlohmann::json& json) {
  SourceTree tree;
  tree.dir = json.value("dir", "");
  tree.url = json.value("url", "");
  tree.fetch_url = json.value("fetch_url", "");
  tree.ref = json.value("ref", "");
  tree.ref_kind = json.value("ref_kind", "");
  tree.commit = json.value("commit", "");
  tree.commit_time = json.value("commit_time", std::int64_t{0});
  for (const auto& sub : json.value("submodules", nlohmann::json::array()))
    tree.submodules.push_back({sub.value("path", ""), sub.value("url", ""), sub.value("commit", "")});
  for (const auto& patch : json.value("patches", nlohmann::json::array()))
    tree.patches.push_back({patch.value("file", ""), patch.value("origin", ""), patch.value("sha256", ""),
                            patch.value("created", std::vector<std::string>{})});
  if (json.contains("sdist") && json["sdist"].is_object()) tree.sdist = SdistOrigin::from_json(json["sdist"]);
  if (json.contains("snapshot") && json["snapshot"].is_object())
    tree.snapshot = LocalSnapshot::from_json(json["snapshot"]);
  tree.subdirectory = json.value("subdirectory", "");
  return tree;
}

std::string source_manifest_problem(const SourceTree& manifest) {
  if (!manifest.subdirectory.empty())
    if (std::string problem = relative_path_problem(manifest.subdirectory); !problem.empty())
      return "subdirectory '" + manifest.subdirectory + "' " + problem;
  for (const auto& sub : manifest.submodules) {
    std::string problem = relative_path_problem(sub.path);
    if (!problem.empty()) return "submodule path '" + sub.path + "' " + problem;
  }
  for (const auto& patch : manifest.patches)
    for (const auto& created : patch.created) {
      std::string problem = relative_path_problem(created);
      if (!problem.empty()) return "path '" + created + "' created by patch " + patch.file + " " + problem;
    }
  return "";
}

namespace {

// A work tree whose objects come from the mirror through git's alternates
// (like `git clone --shared`): no object is copied, so a second checkout of
// a large repository costs only the files written.
Repository open_or_init_worktree(const std::filesystem::path& dir, const std::filesystem::path& mirror,
                                 const std::string& url) {
  ensure_libgit2();
  std::filesystem::create_directories(dir);
  TreeFiles files(dir);
  auto git_dir = files.kind(".git");
  if (git_dir == TreeFiles::Kind::absent) {
    git_repository* raw = nullptr;
    git_check(git_repository_init(&raw, dir.c_str(), 0), "cannot create a work tree at " + dir.string());
    git_repository_free(raw);
  } else if (git_dir != TreeFiles::Kind::directory) {
    fail_bad_input((dir / ".git").string() +
                   " is not a directory (a symlink or a file): not a work tree archbuild made");
  }
  files.write_file(".git/objects/info/alternates", (mirror / "objects").string() + "\n");
  Repository repo = open_repository(dir.string());
  git_remote* remote = nullptr;
  if (git_remote_lookup(&remote, repo.get(), "origin") == 0) {
    git_remote_free(remote);
    git_check(git_remote_set_url(repo.get(), "origin", url.c_str()), "cannot set origin of " + dir.string());
  } else {
    git_check(git_remote_create(&remote, repo.get(), "origin", url.c_str()), "cannot add origin to " + dir.string());
    git_remote_free(remote);
  }
  return repo;
}

struct SymlinkScan {
  std::filesystem::path workdir;
  git_index* index;
  std::string found;
};

// A symlink on disk where the commit has an entry and the index tracks no
// symlink: libgit2's checkout would write through it.
int scan_for_symlinks(const char* root, const git_tree_entry* entry, void* payload) {
  auto* scan = static_cast<SymlinkScan*>(payload);
  std::string path = std::string(root) + git_tree_entry_name(entry);
  std::error_code ec;
  auto type = std::filesystem::symlink_status(scan->workdir / path, ec).type();
  if (type == std::filesystem::file_type::symlink) {
    const git_index_entry* tracked = git_index_get_bypath(scan->index, path.c_str(), 0);
    if (tracked && tracked->mode == GIT_FILEMODE_LINK) return 1;  // libgit2 replaces a symlink it checked out
    scan->found = path;
    return -1;
  }
  // Only real directories are walked into, so every parent above was checked.
  return type == std::filesystem::file_type::directory ? 0 : 1;
}

void check_no_foreign_symlinks(git_repository* repo, git_commit* commit, const std::string& where) {
  const char* workdir = git_repository_workdir(repo);
  if (!workdir) return;
  git_tree* raw_tree = nullptr;
  git_check(git_commit_tree(&raw_tree, commit), "cannot read the tree of " + where);
  GitTree tree(raw_tree);
  git_index* raw_index = nullptr;
  git_check(git_repository_index(&raw_index, repo), "cannot read the index of " + where);
  GitIndex index(raw_index);
  SymlinkScan scan{workdir, raw_index, ""};
  git_tree_walk(raw_tree, GIT_TREEWALK_PRE, scan_for_symlinks, &scan);
  if (!scan.found.empty())
    fail_bad_input("work tree " + where + ": '" + scan.found +
                   "' is a symlink that archbuild did not check out, where the commit has a file or directory; "
                   "archbuild never checks out through a symlink: remove it, or the work tree to start over");
}

// `exact_bytes`: no filter runs (no .gitattributes eol or ident rewrite),
// for trees archbuild itself made a commit of (an sdist, a plain directory),
// which are built byte for byte as they were.
// Returns the commit's committer time.
std::int64_t checkout_commit(git_repository* repo, const std::string& commit_hex, const std::string& where,
                             bool exact_bytes = false) {
  git_oid oid;
  git_check(git_oid_fromstr(&oid, commit_hex.c_str()), "bad commit id " + commit_hex);
  git_commit* commit = nullptr;
  git_check(git_commit_lookup(&commit, repo, &oid), "commit " + commit_hex + " missing for " + where);
  GitCommit holder(commit);
  check_no_foreign_symlinks(repo, commit, where);
  git_checkout_options options = GIT_CHECKOUT_OPTIONS_INIT;
  options.checkout_strategy = GIT_CHECKOUT_FORCE;
  options.disable_filters = exact_bytes ? 1 : 0;
  git_check(git_checkout_tree(repo, reinterpret_cast<git_object*>(commit), &options), "cannot check out " + where);
  git_check(git_repository_set_head_detached(repo, &oid), "cannot set HEAD of " + where);
  return static_cast<std::int64_t>(git_commit_time(commit));
}

struct PendingSubmodule {
  std::string name;
  std::string path;  // relative to the top
  std::filesystem::path dir;
  std::string url;        // after relative resolution
  std::string fetch_url;  // and after rewriting
  std::string commit;
};

struct Parent {
  std::filesystem::path dir;
  std::string relative;  // "" for the top
  std::string url;       // its URL before rewriting (relative submodule URLs resolve against it)
};

struct CollectPayload {
  git_repository* repo;
  const Parent* parent;
  const UrlRewriter* rewriter;
  std::vector<PendingSubmodule>* out;
  std::vector<std::string> unresolved_urls;
  std::vector<std::string> bad_paths;
};

int collect(git_submodule* sm, const char* name, void* payload) {
  auto* p = static_cast<CollectPayload*>(payload);
  const git_oid* head = git_submodule_head_id(sm);
  if (!head) return 0;  // listed in .gitmodules but not in the tree
  const char* url = git_submodule_url(sm);
  if (!url) {
    p->unresolved_urls.push_back(name);
    return 0;
  }
  std::string path = git_submodule_path(sm);
  std::string problem = relative_path_problem(path);
  if (!problem.empty()) {
    p->bad_paths.push_back("'" + path + "' " + problem);
    return 0;
  }
  git_submodule_init(sm, /*overwrite=*/1);  // records it in .git/config, as `git submodule init` does
  std::string resolved = resolve_submodule_url(p->parent->url, url);
  p->out->push_back({name, p->parent->relative.empty() ? path : p->parent->relative + "/" + path, p->parent->dir / path,
                     resolved, p->rewriter->apply(resolved), oid_hex(*head)});
  return 0;
}

// The user's own checkout of a submodule in the clone at `root`: a real
// directory (no symlink on the way) holding a repository; nullopt if not.
std::optional<std::filesystem::path> checked_out_submodule(const std::string& root, const std::string& path) {
  std::filesystem::path at = root;
  std::error_code ec;
  for (const auto& part : std::filesystem::path(path)) {
    at /= part;
    if (!std::filesystem::is_directory(std::filesystem::symlink_status(at, ec))) return std::nullopt;
  }
  // Its .git a directory or git's gitdir file, not a symlink to elsewhere.
  const auto git = std::filesystem::symlink_status(at / ".git", ec);
  if (!std::filesystem::is_directory(git) && !std::filesystem::is_regular_file(git)) return std::nullopt;
  return at;
}

// Only a checkout (a directory holding .git) reached without a symlink is
// removed; the paths were checked to be inside the tree when read back.
void remove_stale_submodules(const SourceTree& previous, const std::vector<std::string>& current_paths,
                             const TreeFiles& files) {
  for (const auto& old : previous.submodules) {
    if (std::find(current_paths.begin(), current_paths.end(), old.path) != current_paths.end()) continue;
    if (files.kind(old.path) == TreeFiles::Kind::directory && files.kind(old.path + "/.git") != TreeFiles::Kind::absent)
      files.remove(old.path);
  }
}

SourceTree read_manifest(const std::filesystem::path& dir) {
  auto path = source_manifest_path(dir);
  auto not_ours = [&] {
    fail_bad_input("--dest " + dir.string() +
                   " exists and is not a work tree archbuild made; "
                   "choose an empty or new directory");
  };
  std::error_code ec;
  if (!std::filesystem::is_directory(std::filesystem::symlink_status(dir, ec))) not_ours();
  TreeFiles files(dir);
  if (files.kind(".git") != TreeFiles::Kind::directory ||
      files.kind(".git/archbuild-source.json") != TreeFiles::Kind::file)
    not_ours();
  std::ifstream manifest(path);
  if (!manifest) not_ours();
  SourceTree previous;
  try {
    previous = SourceTree::from_json(nlohmann::json::parse(manifest));
  } catch (const nlohmann::json::exception& e) {
    fail_bad_input("unreadable " + path.string() + ": " + e.what());
  }
  // What archbuild reads back decides what it removes: trust no path in it.
  std::string problem = source_manifest_problem(previous);
  if (!problem.empty())
    fail_bad_input(path.string() + ": " + problem + "; archbuild removes only paths inside its work tree: remove " +
                   dir.string() + " to start over");
  return previous;
}

}  // namespace

namespace {
SourceTree checkout_into(SourceTree tree, const std::optional<SourceTree>& previous, const CheckoutRequest& request,
                         const MirrorCache& mirrors);
}

SourceTree checkout_source(const CheckoutRequest& request, const MirrorCache& mirrors) {
  ensure_libgit2();
  SourceTree tree;
  tree.dir = std::filesystem::absolute(request.dest);
  tree.url = request.url;
  tree.fetch_url = request.rewriter.apply(request.url);
  tree.ref = request.ref;
  tree.sdist = request.sdist;
  tree.snapshot = request.snapshot;
  tree.subdirectory = request.subdirectory;

  std::optional<SourceTree> previous;
  std::error_code ec;
  if (std::filesystem::is_symlink(tree.dir, ec))
    fail_bad_input("--dest " + tree.dir.string() +
                   " is a symlink; archbuild never follows a symlink out of a tree it manages: "
                   "give the directory itself");
  // std::filesystem::is_empty is also true of an empty file, which the
  // cleanup of a failed first checkout would then delete.
  if (std::filesystem::exists(tree.dir, ec) && !std::filesystem::is_directory(tree.dir, ec))
    fail_bad_input("--dest " + tree.dir.string() + " exists and is not a directory; give a new or empty directory");
  // A first checkout is marked beside the tree until it is complete: one cut
  // short (SIGINT, SIGKILL, power) is archbuild's own half-written tree, and
  // the next run redoes it instead of refusing a directory it made.
  const std::filesystem::path incomplete = tree.dir.string() + ".archbuild-incomplete";
  if (std::filesystem::exists(tree.dir, ec) && !std::filesystem::is_empty(tree.dir, ec)) {
    if (std::filesystem::is_regular_file(std::filesystem::symlink_status(incomplete, ec)) &&
        !std::filesystem::exists(source_manifest_path(tree.dir), ec)) {
      std::filesystem::remove_all(tree.dir, ec);  // never follows a symlink inside it
      if (ec) fail_environment("cannot remove the unfinished checkout " + tree.dir.string() + ": " + ec.message());
    } else {
      previous = read_manifest(tree.dir);
      tree.reused = true;
    }
  }
  bool fresh = !tree.reused;
  log::verbose("source {} {}: into {} ({}){}", tree.url, tree.ref, tree.dir.string(),
               fresh ? "a new work tree" : "reusing its work tree", request.offline ? "; offline: no fetch" : "");
  const bool parent_existed = std::filesystem::exists(tree.dir.parent_path(), ec);
  if (fresh) {
    std::filesystem::create_directories(tree.dir.parent_path(), ec);
    // Not written aside: its being there is what counts, from before the
    // first file of the tree.
    write_whole_file(incomplete,
                     "archbuild: first checkout of " + tree.url + " into " + tree.dir.string() + " in progress\n");
  }
  try {
    auto done = checkout_into(tree, previous, request, mirrors);
    if (fresh) std::filesystem::remove(incomplete, ec);
    return done;
  } catch (...) {
    // Nothing half-done: a new work tree goes away. A reused one keeps its
    // last manifest (written only on success), so the next run redoes it all.
    if (fresh) {
      std::filesystem::remove_all(tree.dir, ec);
      std::filesystem::remove(incomplete, ec);
      if (!parent_existed) std::filesystem::remove(tree.dir.parent_path(), ec);  // only if empty: ours
    }
    throw;
  }
}

namespace {

// The subdirectory a build runs in is a real directory of the tree, and a
// Python project (pip's rule for #subdirectory=).
void check_project_subdirectory(const SourceTree& tree, TreeFiles& files) {
  if (tree.subdirectory.empty()) return;
  const std::string blocked = files.blocked_prefix(tree.subdirectory);
  const auto kind = files.kind(tree.subdirectory);
  const std::string where = "subdirectory '" + tree.subdirectory + "' of " + tree.url + " " + tree.ref;
  auto others = [&] {
    const auto listed = describe_project_dirs(find_project_dirs(tree.dir), tree.subdirectory);
    return listed.empty() ? std::string(" (no directory of the tree holds a setup.py or pyproject.toml)")
                          : "; the tree's projects: " + listed;
  };
  if (!blocked.empty() || kind == TreeFiles::Kind::symlink)
    fail_bad_input(where + ": '" + (blocked.empty() ? tree.subdirectory : blocked) +
                   "' is a symlink or a file; archbuild builds only a real directory of the tree");
  if (kind != TreeFiles::Kind::directory) fail_bad_input(where + " does not exist" + others());
  if (files.kind(tree.subdirectory + "/setup.py") != TreeFiles::Kind::file &&
      files.kind(tree.subdirectory + "/pyproject.toml") != TreeFiles::Kind::file)
    fail_bad_input(where + " holds neither a setup.py nor a pyproject.toml" + others());
}

SourceTree checkout_into(SourceTree tree, const std::optional<SourceTree>& previous, const CheckoutRequest& request,
                         const MirrorCache& mirrors) {
  auto top = mirrors.ensure({tree.fetch_url, request.ref, std::nullopt, request.offline, request.refresh});
  tree.commit = top.commit;
  tree.ref_kind = top.ref_kind;
  tree.fetched = top.fetched;
  log::verbose("source {}: {} {} is {}{}", tree.url, tree.ref_kind, tree.ref, tree.commit,
               tree.fetched ? " (fetched)" : " (the mirror as it was)");

  Repository repo = open_or_init_worktree(tree.dir, top.path, request.url);
  TreeFiles files(tree.dir);
  if (previous) {
    // Files a previous patch created are untracked: remove them so it re-applies.
    for (const auto& patch : previous->patches)
      for (const auto& created : patch.created)
        if (files.remove_file(created)) files.remove_empty_parents(created);
  }
  const bool archbuilds_own_commit = request.sdist ||
                                     (request.snapshot && request.snapshot->kind == LocalSnapshot::Kind::directory);
  tree.commit_time = checkout_commit(repo.get(), tree.commit, tree.dir.string(), archbuilds_own_commit);

  if (request.submodules) {
    // A repository on this machine (a local clone, built as it is or at a --ref): its submodule checkouts.
    std::error_code ec;
    const std::string local_clone = request.snapshot && request.snapshot->kind == LocalSnapshot::Kind::working_tree
                                        ? request.snapshot->path
                                    : !request.url.empty() && request.url.front() == '/' &&
                                            std::filesystem::is_directory(request.url, ec)
                                        ? request.url
                                        : std::string();
    std::vector<Parent> level = {{tree.dir, "", request.url}};
    std::vector<std::string> all_paths;
    std::mutex fetched_mutex;
    while (!level.empty()) {
      std::vector<PendingSubmodule> pending;
      for (const auto& parent : level) {
        Repository parent_repo = parent.dir == tree.dir ? nullptr : open_repository(parent.dir.string());
        git_repository* handle = parent_repo ? parent_repo.get() : repo.get();
        CollectPayload payload{handle, &parent, &request.rewriter, &pending, {}};
        git_check(git_submodule_foreach(handle, collect, &payload),
                  "cannot read the submodules of " + parent.dir.string());
        if (!payload.unresolved_urls.empty())
          fail_bad_input("submodule '" + payload.unresolved_urls.front() + "' of " + parent.dir.string() +
                         " has no URL");
        if (!payload.bad_paths.empty())
          fail_bad_input("a submodule path of " + parent.dir.string() + ", " + payload.bad_paths.front() +
                         ", is not inside the tree");
      }
      for (const auto& sub : pending) {
        all_paths.push_back(sub.path);
        log::debug("submodule {}: {} at {}", sub.path, sub.fetch_url, sub.commit);
      }
      if (!pending.empty()) log::verbose("source {}: {} submodules to check out", tree.url, pending.size());
      if (previous) remove_stale_submodules(*previous, all_paths, files);

      // Each submodule is a separate repository: safe on its own thread.
      std::vector<std::future<void>> jobs;
      std::vector<Parent> next;
      std::mutex next_mutex;
      size_t cursor = 0;
      std::mutex cursor_mutex;
      auto worker = [&] {
        while (true) {
          size_t index;
          {
            std::lock_guard lock(cursor_mutex);
            if (cursor >= pending.size()) return;
            index = cursor++;
          }
          const auto& sub = pending[index];
          // Its directory and every one above it are real directories (or not there yet).
          std::string blocked = files.blocked_prefix(sub.path);
          if (blocked.empty() && files.kind(sub.path) == TreeFiles::Kind::symlink) blocked = sub.path;
          if (!blocked.empty())
            fail_bad_input("submodule " + sub.path + ": '" + blocked + "' in the work tree " + tree.dir.string() +
                           " is not a directory (a symlink or a file); archbuild never checks out through a symlink");
          MirrorRequest wanted{sub.fetch_url, std::nullopt, sub.commit, request.offline, false, std::nullopt};
          // A local clone's own checkout of the submodule holds the commit: no fetch, offline too.
          if (!local_clone.empty()) wanted.seed = checked_out_submodule(local_clone, sub.path);
          auto mirror = mirrors.ensure(wanted);
          Repository sub_repo = open_or_init_worktree(sub.dir, mirror.path, sub.url);
          checkout_commit(sub_repo.get(), sub.commit, "submodule " + sub.path);
          {
            std::lock_guard lock(fetched_mutex);
            tree.fetched = tree.fetched || mirror.fetched;
          }
          std::lock_guard lock(next_mutex);
          next.push_back({sub.dir, sub.path, sub.url});
        }
      };
      unsigned thread_count = std::max(1u, std::min<unsigned>(request.threads, pending.size()));
      for (unsigned i = 0; i < thread_count; ++i) jobs.push_back(std::async(std::launch::async, worker));
      for (auto& job : jobs) job.get();  // rethrows the first failure
      for (const auto& sub : pending) tree.submodules.push_back({sub.path, sub.fetch_url, sub.commit});
      std::sort(next.begin(), next.end(), [](const Parent& a, const Parent& b) { return a.relative < b.relative; });
      level = std::move(next);
    }
    std::sort(tree.submodules.begin(), tree.submodules.end(),
              [](const SubmoduleCheckout& a, const SubmoduleCheckout& b) { return a.path < b.path; });
  }

  tree.patches = apply_patches(repo.get(), request.patches);
  check_project_subdirectory(tree, files);

  files.write_file(".git/archbuild-source.json", json_text(tree.to_json()) + "\n");
  return tree;
}

}  // namespace

}  // namespace archbuild
