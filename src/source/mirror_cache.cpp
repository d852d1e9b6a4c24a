#include "source/mirror_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "core/cache_layout.h"
#include "core/error.h"
#include "core/file_lock.h"
#include "core/log.h"
#include "core/sha256.h"
#include "core/strings.h"
#include "source/git_session.h"

namespace archbuild {

namespace {

constexpr int kFetchAttempts = 3;

}  // namespace

std::string repository_short_name(const std::string& url) {
  std::string name = url;
  while (!name.empty() && name.back() == '/') name.pop_back();
  auto slash = name.find_last_of("/:");
  if (slash != std::string::npos) name = name.substr(slash + 1);
  if (name.size() > 4 && name.substr(name.size() - 4) == ".git") name.resize(name.size() - 4);
  for (auto& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  return name.empty() ? "repo" : name;
}

namespace {

bool looks_like_hash(const std::string& ref) {
  return ref.size() >= 7 && ref.size() <= 40 &&
         std::all_of(ref.begin(), ref.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

struct ProgressPayload {
  const ProgressSink* sink;
  std::string name;
};

int on_transfer(const git_indexer_progress* stats, void* payload) {
  auto* p = static_cast<ProgressPayload*>(payload);
  if (p->sink && *p->sink) (*p->sink)({p->name, stats->received_objects, stats->total_objects, stats->received_bytes});
  return 0;
}

std::optional<std::pair<std::string, std::string>> resolve(git_repository* repo, const MirrorRequest& request) {
  auto peel_to_commit = [&](const std::string& spec) -> std::optional<std::string> {
    git_object* object = nullptr;
    if (git_revparse_single(&object, repo, spec.c_str()) != 0) return std::nullopt;
    GitObject holder(object);
    git_object* commit = nullptr;
    if (git_object_peel(&commit, object, GIT_OBJECT_COMMIT) != 0) return std::nullopt;
    GitObject commit_holder(commit);
    return oid_hex(*git_object_id(commit));
  };
  if (request.commit) {
    git_oid oid;
    if (git_oid_fromstr(&oid, request.commit->c_str()) != 0) return std::nullopt;
    git_commit* commit = nullptr;
    if (git_commit_lookup(&commit, repo, &oid) != 0) return std::nullopt;
    git_commit_free(commit);
    return std::make_pair(*request.commit, std::string("commit"));
  }
  const std::string& ref = *request.ref;
  if (auto id = peel_to_commit("refs/tags/" + ref)) return std::make_pair(*id, std::string("tag"));
  if (auto id = peel_to_commit("refs/heads/" + ref)) return std::make_pair(*id, std::string("branch"));
  if (looks_like_hash(ref))
    if (auto id = peel_to_commit(ref)) return std::make_pair(*id, std::string("commit"));
  return std::nullopt;
}

bool fetch(git_repository* repo, const std::string& url, const std::vector<std::string>& specs,
           ProgressPayload& payload, std::string& error) {
  git_remote* remote_raw = nullptr;
  git_check(git_remote_create_anonymous(&remote_raw, repo, url.c_str()), "bad repository URL '" + url + "'");
  GitRemote remote(remote_raw);
  git_fetch_options options = GIT_FETCH_OPTIONS_INIT;
  options.callbacks.transfer_progress = on_transfer;
  options.callbacks.payload = &payload;
  options.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
  std::vector<const char*> pointers;
  for (const auto& spec : specs) pointers.push_back(spec.c_str());
  git_strarray refspecs{const_cast<char**>(pointers.data()), pointers.size()};
  if (git_remote_fetch(remote.get(), &refspecs, &options, "archbuild mirror") == 0) return true;
  error = git_last_error();
  return false;
}

// The remote's ref names ("refs/tags/v1.0", "refs/heads/main"), listed
// without fetching anything; nullopt when the remote cannot be reached.
std::optional<std::vector<std::string>> remote_refs(const std::string& url) {
  git_remote* remote_raw = nullptr;
  if (git_remote_create_detached(&remote_raw, url.c_str()) != 0) return std::nullopt;
  GitRemote remote(remote_raw);
  if (git_remote_connect(remote.get(), GIT_DIRECTION_FETCH, nullptr, nullptr, nullptr) != 0) return std::nullopt;
  const git_remote_head** heads = nullptr;
  size_t count = 0;
  if (git_remote_ls(&heads, &count, remote.get()) != 0) return std::nullopt;
  std::vector<std::string> names;
  for (size_t i = 0; i < count; ++i)
    if (std::string name = heads[i]->name; name.find("^{}") == std::string::npos) names.push_back(name);
  return names;
}

// The remote's tag names (for suggestions).
std::vector<std::string> remote_tags(const std::string& url) {
  std::vector<std::string> names;
  for (const auto& name : remote_refs(url).value_or(std::vector<std::string>{}))
    if (name.rfind("refs/tags/", 0) == 0) names.push_back(name.substr(10));
  return names;
}

[[noreturn]] void fail_unknown_ref(const std::string& ref, const std::string& url, std::vector<std::string> tags) {
  auto suggestions = closest_names(ref, tags, 3);
  throw UserError(ExitCode::bad_input, "ref '" + ref + "' is not a tag, branch or commit of " + url +
                                           (suggestions.empty() ? "" : "; closest tags: " + join(suggestions, ", ")));
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t previous = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t saved = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1)});
      previous = saved;
    }
  }
  return row[b.size()];
}

}  // namespace

std::vector<std::string> closest_names(const std::string& wanted, const std::vector<std::string>& names, size_t count) {
  std::vector<std::pair<size_t, std::string>> ranked;
  for (const auto& name : names) ranked.emplace_back(edit_distance(wanted, name), name);
  std::sort(ranked.begin(), ranked.end());
  std::vector<std::string> out;
  for (size_t i = 0; i < ranked.size() && i < count; ++i) out.push_back(ranked[i].second);
  return out;
}

MirrorCache::MirrorCache(std::filesystem::path cache_dir, ProgressSink progress)
    : cache_dir_(cache_dir), root_(CacheLayout(cache_dir).mirrors()), progress_(std::move(progress)) {}

std::filesystem::path MirrorCache::path_for(const std::string& url) const {
  return root_ / (repository_short_name(url) + "-" + sha256_hex(url).substr(0, 12) + ".git");
}

std::string MirrorCache::default_branch(const std::string& url, bool offline) const {
  ensure_libgit2();
  std::filesystem::create_directories(root_);
  auto path = path_for(url);
  FileLock lock(path.string() + ".lock");
  git_repository* raw = nullptr;
  if (git_repository_open_bare(&raw, path.c_str()) != 0)
    git_check(git_repository_init(&raw, path.c_str(), 1), "cannot create mirror " + path.string());
  Repository repo(raw);
  if (!offline) {
    git_remote* remote_raw = nullptr;
    git_check(git_remote_create_anonymous(&remote_raw, repo.get(), url.c_str()), "bad repository URL '" + url + "'");
    GitRemote remote(remote_raw);
    git_buf branch = GIT_BUF_INIT;
    if (git_remote_connect(remote.get(), GIT_DIRECTION_FETCH, nullptr, nullptr, nullptr) == 0 &&
        git_remote_default_branch(&branch, remote.get()) == 0) {
      std::string name(branch.ptr, branch.size);
      git_buf_dispose(&branch);
      // Remember it, so an offline run can answer too.
      git_reference* head = nullptr;
      git_reference_symbolic_create(&head, repo.get(), "refs/archbuild/default", name.c_str(), 1, "default branch");
      git_reference_free(head);
      log::verbose("mirror {}: default branch {}, asked the remote", url, name);
      return name.rfind("refs/heads/", 0) == 0 ? name.substr(11) : name;
    }
    fail_environment("cannot ask " + url + " for its default branch (" + git_last_error() + "); pass --ref");
  }
  git_reference* remembered = nullptr;
  if (git_reference_lookup(&remembered, repo.get(), "refs/archbuild/default") == 0) {
    std::string name = git_reference_symbolic_target(remembered);
    git_reference_free(remembered);
    log::verbose("mirror {}: default branch {}, remembered by the mirror (offline: not asked)", url, name);
    return name.rfind("refs/heads/", 0) == 0 ? name.substr(11) : name;
  }
  fail_environment("offline, and the mirror of " + url + " does not know its default branch; pass --ref");
}

void MirrorCache::check_ref(const std::string& url, const std::string& ref, bool offline) const {
  ensure_libgit2();
  const auto path = path_for(url);
  git_repository* raw = nullptr;
  if (std::filesystem::exists(path) && git_repository_open_bare(&raw, path.c_str()) == 0) {
    Repository repo(raw);
    if (resolve(repo.get(), {url, ref, std::nullopt, offline, false})) return;
  }
  if (offline || looks_like_hash(ref)) return;  // the fetch tells
  auto refs = remote_refs(url);
  if (!refs) return;  // unreachable: the fetch says so, with its retries
  std::vector<std::string> tags;
  for (const auto& name : *refs) {
    if (name == "refs/tags/" + ref || name == "refs/heads/" + ref) return;
    if (name.rfind("refs/tags/", 0) == 0) tags.push_back(name.substr(10));
  }
  fail_unknown_ref(ref, url, std::move(tags));
}

MirrorResult MirrorCache::ensure(const MirrorRequest& request) const {
  ensure_libgit2();
  std::filesystem::create_directories(root_);
  MirrorResult result;
  result.path = path_for(request.url);
  FileLock lock(result.path.string() + ".lock");

  git_repository* raw = nullptr;
  if (git_repository_open_bare(&raw, result.path.c_str()) != 0)
    git_check(git_repository_init(&raw, result.path.c_str(), /*is_bare=*/1),
              "cannot create mirror " + result.path.string());
  Repository repo(raw);

  std::string wanted = request.commit ? "commit " + *request.commit : "ref '" + *request.ref + "'";
  if (!request.refresh)
    if (auto found = resolve(repo.get(), request)) {
      result.commit = found->first;
      result.ref_kind = found->second;
      log::verbose("mirror {}: {} is in {} ({} {}): no fetch{}", request.url, wanted, result.path.string(),
                   result.ref_kind, result.commit.substr(0, 12), request.offline ? " (offline)" : "");
      return result;
    }
  // A shallow clone's commits lack their parents: a mirror must not take them.
  const auto usable_seed = [&] {
    git_repository* seed = nullptr;
    if (git_repository_open(&seed, request.seed->c_str()) != 0) return false;
    Repository held(seed);
    return git_repository_is_shallow(seed) == 0;
  };
  if (request.seed && request.commit && usable_seed()) {
    // Its HEAD too: a checked-out submodule is a detached HEAD no branch need reach.
    const std::vector<std::string> seed_specs = {"+HEAD:refs/archbuild/seed/HEAD",
                                                 "+refs/heads/*:refs/archbuild/seed/heads/*",
                                                 "+refs/tags/*:refs/archbuild/seed/tags/*"};
    ProgressPayload quiet{nullptr, repository_short_name(request.url)};
    std::string seed_error;
    if (!fetch(repo.get(), request.seed->string(), seed_specs, quiet, seed_error))
      log::verbose("mirror {}: nothing copied from {}: {}", request.url, request.seed->string(), seed_error);
    if (auto found = resolve(repo.get(), request)) {
      log::verbose("mirror {}: {} copied from {}: no fetch", request.url, wanted, request.seed->string());
      result.commit = found->first;
      result.ref_kind = found->second;
      return result;
    }
  }
  if (request.offline)
    fail_environment(wanted + " is not in the mirror of " + request.url + " (" + result.path.string() +
                     ") and --offline forbids fetching");

  // A named ref fetches just that tag or branch: PyTorch has thousands of
  // branches, and a mirror need not hold them all. Commits (submodules,
  // hashes) need every branch and tag, since any may reach them.
  bool narrow = request.ref && !looks_like_hash(*request.ref);
  std::vector<std::string> specs;
  if (narrow)
    specs = {"+refs/tags/" + *request.ref + ":refs/tags/" + *request.ref,
             "+refs/heads/" + *request.ref + ":refs/heads/" + *request.ref};
  else
    specs = {"+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"};
  ProgressPayload payload{&progress_, repository_short_name(request.url)};
  std::string last_error;
  bool fetched = false;
  log::verbose("mirror {}: fetching {} into {} ({})", request.url, wanted, result.path.string(), join(specs, " "));
  const auto started = std::chrono::steady_clock::now();
  for (int attempt = 1; attempt <= kFetchAttempts && !fetched; ++attempt) {
    if (fetch(repo.get(), request.url, specs, payload, last_error)) {
      fetched = true;
      log::verbose("mirror {}: fetched in {:.1f} s", request.url,
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    } else {
      log::verbose("mirror {}: fetch attempt {} of {} failed: {}", request.url, attempt, kFetchAttempts, last_error);
      if (attempt < kFetchAttempts) std::this_thread::sleep_for(std::chrono::milliseconds(500 * attempt));
    }
  }
  if (!fetched && resolve(repo.get(), request))
    log::verbose("mirror {}: not fetched, but {} is in the mirror: using it as it is", request.url, wanted);
  if (!fetched && !resolve(repo.get(), request))
    fail_environment("cannot fetch " + request.url + " after " + std::to_string(kFetchAttempts) +
                     " attempts: " + last_error);
  result.fetched = fetched;
  auto found = resolve(repo.get(), request);
  if (!found) {
    if (request.commit)
      throw UserError(ExitCode::bad_input, "commit " + *request.commit + " is not in " + request.url +
                                               " (not reachable from any branch or tag)");
    fail_unknown_ref(*request.ref, request.url, remote_tags(request.url));
  }
  result.commit = found->first;
  result.ref_kind = found->second;
  return result;
}

}  // namespace archbuild
