#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "source/mirror_cache.h"
#include "source/patch_apply.h"
#include "source/tree_snapshot.h"
#include "source/url_rewrite.h"

namespace archbuild {

struct SubmoduleCheckout {
  std::string path;  // relative to the top of the tree, nested ones included
  std::string url;   // as fetched (after rewriting)
  std::string commit;
};

// Where a source made from an sdist (pypi:NAME==VERSION) came from: the
// manifest records it, and its sha256 is part of the cache key.
struct SdistOrigin {
  std::string project;  // PEP 503 name
  std::string version;
  std::string file;         // the sdist's file name
  std::string url;          // where it was downloaded from (credentials removed)
  std::string index;        // the index or find-links location that listed it
  std::string sha256;       // of the file, checked on every use
  bool index_hash = false;  // the index gave this sha256, and the download matched it

  nlohmann::json to_json() const;
  static SdistOrigin from_json(const nlohmann::json& json);
};

// The exact source a build uses: what the manifest records and the cache key hashes.
struct SourceTree {
  std::filesystem::path dir;
  std::string url;        // as asked
  std::string fetch_url;  // after rewriting
  std::string ref;
  std::string ref_kind;  // tag, branch, commit
  std::string commit;
  // Its committer time, seconds since 1970: 0 for the commits archbuild makes
  // of an sdist or a directory (made at time 0, so their ids are the files').
  std::int64_t commit_time = 0;
  std::vector<SubmoduleCheckout> submodules;
  std::vector<AppliedPatch> patches;
  std::optional<SdistOrigin> sdist;       // the source is this sdist's files
  std::optional<LocalSnapshot> snapshot;  // the source is a local directory as it was on disk
  std::string subdirectory;               // the project's directory inside the tree; "" for its root
  bool fetched = false;                   // false: everything came from the mirrors (works offline)
  bool reused = false;                    // an existing work tree was updated in place

  // Where the project is built: `dir`, or its subdirectory.
  std::filesystem::path project_dir() const { return subdirectory.empty() ? dir : dir / subdirectory; }
  nlohmann::json to_json() const;
  static SourceTree from_json(const nlohmann::json& json);
};

struct CheckoutRequest {
  std::string url;
  std::string ref;
  std::filesystem::path dest;
  bool submodules = true;
  bool offline = false;
  bool refresh = false;
  UrlRewriter rewriter;
  std::vector<PatchFile> patches;
  std::optional<SdistOrigin> sdist;       // recorded in the manifest
  std::optional<LocalSnapshot> snapshot;  // recorded in the manifest
  std::string subdirectory;               // checked to be a directory of the tree
  unsigned threads = 8;                   // submodule fetches/checkouts in parallel
};

// Mirror -> work tree at the commit -> recursive submodules, each from its own
// mirror -> patches. `dest` must be absent, empty, or a work tree archbuild
// made before (then it is updated in place, keeping untracked build output);
// a symlink, or a tree whose manifest names a path outside it, is refused.
// Nothing is written or removed through a symlink. A subdirectory must be
// a real directory of the tree (no symlink on the way); one without a
// setup.py or pyproject.toml is refused, naming the directories that have
// one. The manifest is written to <dest>/.git/archbuild-source.json.
SourceTree checkout_source(const CheckoutRequest& request, const MirrorCache& mirrors);

std::filesystem::path source_manifest_path(const std::filesystem::path& dest);

// Why a manifest read back from a work tree cannot be trusted ("" when it
// can): a submodule path or a patch's created path that is not a normalised
// relative path inside the tree.
std::string source_manifest_problem(const SourceTree& manifest);

}  // namespace archbuild
