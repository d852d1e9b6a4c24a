#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

namespace archbuild {

struct FetchProgress {
  std::string name;  // short repository name
  unsigned received_objects = 0;
  unsigned total_objects = 0;
  size_t received_bytes = 0;
};
using ProgressSink = std::function<void(const FetchProgress&)>;

struct MirrorRequest {
  std::string url;                    // after URL rewriting
  std::optional<std::string> ref;     // tag, branch, or commit (full or abbreviated)
  std::optional<std::string> commit;  // an exact commit (submodules)
  bool offline = false;               // never fetch
  bool refresh = false;               // fetch even when the ref is present
  // A repository on this machine that may hold the commit (a local clone's
  // checked-out submodule): copied from before the URL is fetched, offline
  // too, into refs of its own (refs/archbuild/seed/...), never over the
  // mirror's branches and tags.
  std::optional<std::filesystem::path> seed;
};

struct MirrorResult {
  std::filesystem::path path;  // the bare mirror
  std::string commit;          // full hex id
  std::string ref_kind;        // "tag", "branch", "commit"
  bool fetched = false;        // false: served from the mirror as it was (works offline)
};

// One bare mirror per repository URL under <cache>/mirrors, fetched only when
// the wanted ref or commit is missing. Fetches are retried (bounded) and
// serialised per mirror with a lock file; libgit2 writes packs and refs
// atomically, so an interrupted fetch leaves the mirror usable.
class MirrorCache {
 public:
  explicit MirrorCache(std::filesystem::path cache_dir, ProgressSink progress = {});
  MirrorResult ensure(const MirrorRequest& request) const;
  // The remote's default branch ("main"), asked over the network, or read
  // from the mirror when `offline`. Throws UserError when it cannot be told.
  std::string default_branch(const std::string& url, bool offline) const;
  // Throws UserError(bad_input) when `ref` is not a tag or branch of `url`:
  // asked of the mirror, then of the remote (its refs listed, nothing
  // fetched). A commit hash, an offline run or an unreachable remote is
  // left to the fetch, which says what it finds.
  void check_ref(const std::string& url, const std::string& ref, bool offline) const;
  std::filesystem::path path_for(const std::string& url) const;
  const std::filesystem::path& cache_dir() const { return cache_dir_; }

 private:
  std::filesystem::path cache_dir_;
  std::filesystem::path root_;
  ProgressSink progress_;
};

// "https://github.com/pytorch/pytorch.git" -> "pytorch": safe as a path component.
std::string repository_short_name(const std::string& url);

// Edit-distance ranking of `names` against `wanted` (for "did you mean").
std::vector<std::string> closest_names(const std::string& wanted, const std::vector<std::string>& names, size_t count);

}  // namespace archbuild
