#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace archbuild {

// The one place that names what lives under archbuild's cache dir. Every
// other file asks this type for a path instead of spelling a folder name.
//
//   mirrors/            bare git mirrors, one per URL (pypi:NAME: its sdists, one commit per version)
//   sdists/NAME/        downloaded sdists with the sha256 recorded for each version
//   worktrees/NAME-REF  checked-out sources (kept: incremental rebuilds)
//   builds/NAME-REF     a build's log, plan, report, wheels before publishing
//   store/HASH          published wheels with key.txt and manifest.json
//   quarantine/         wheels that failed validation, with their report
//   wheels/ simple/     what pip reads (--find-links, PEP 503 index)
//   index.lock          held while wheels/ and simple/ are rewritten
//   ccache/             compile results (CCACHE_DIR)
//   ccache-bin/         ccache's symlink mode for builds without launchers
//   cxx-runtime/        libstdc++.so -> the shared runtime, for a compiler that links its static copy
//   launcher-cuda/      toolkits whose nvcc runs the compiler launcher
//   matrix/             one dir per matrix cell
//   secret.key          keys the digests of secrets in what the cache stores
class CacheLayout {
 public:
  // What every file or dir written beside its final name starts with until
  // it is renamed into place; gc removes the ones whose writer is gone.
  static constexpr std::string_view kTemporaryPrefix = ".tmp-";

  explicit CacheLayout(std::filesystem::path root) : root_(std::move(root)) {}
  const std::filesystem::path& root() const { return root_; }

  std::filesystem::path mirrors() const { return root_ / "mirrors"; }
  std::filesystem::path sdists() const { return root_ / "sdists"; }
  std::filesystem::path worktrees() const { return root_ / "worktrees"; }
  std::filesystem::path builds() const { return root_ / "builds"; }
  std::filesystem::path store() const { return root_ / "store"; }
  std::filesystem::path quarantine() const { return root_ / "quarantine"; }
  std::filesystem::path wheels() const { return root_ / "wheels"; }
  std::filesystem::path simple_index() const { return root_ / "simple"; }
  std::filesystem::path index_lock() const { return root_ / "index.lock"; }
  std::filesystem::path ccache() const { return root_ / "ccache"; }
  // sccache's local cache and toolchain packages for the compile cluster.
  std::filesystem::path sccache() const { return root_ / "sccache"; }
  std::filesystem::path ccache_masquerade() const { return root_ / "ccache-bin"; }
  // libstdc++.so for a compiler that would link its static copy (toolchain/cxx_runtime_link.h)
  std::filesystem::path cxx_runtime_links() const { return root_ / "cxx-runtime"; }
  std::filesystem::path launcher_toolkits() const { return root_ / "launcher-cuda"; }
  std::filesystem::path matrix() const { return root_ / "matrix"; }
  // The cache's own secret (core/secrets): keys the digests that stand for
  // secrets in what it stores; never pushed or shown.
  std::filesystem::path secret_key() const { return root_ / "secret.key"; }

  // The work tree and build dir of one (name, ref): "torch-v2.9.1".
  std::filesystem::path worktree(const std::string& name, const std::string& ref) const;
  std::filesystem::path build_dir(const std::string& name, const std::string& ref) const;

 private:
  std::filesystem::path root_;
};

}  // namespace archbuild
