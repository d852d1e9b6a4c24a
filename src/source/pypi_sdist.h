#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "source/mirror_cache.h"
#include "source/sdist_archive.h"
#include "source/source_tree.h"
#include "source/url_rewrite.h"

namespace archbuild {

class Settings;

// "pypi:NAME==VERSION" (or "pypi:NAME", the version given elsewhere).
struct PypiSpec {
  std::string name;     // PEP 503-normalised: "torch-scatter"
  std::string version;  // "" when the spec names none
};

// Throws UserError(bad_input) for a malformed spec: no name or an invalid
// one, extras, an operator other than ==, an empty or invalid version.
PypiSpec parse_pypi_spec(const std::string& text);
// Throws UserError(bad_input) unless `version` is one exact PEP 440 version
// that is also a valid git tag name.
void check_pypi_version(const std::string& version, const std::string& what);

// An sdist as a git source: a commit of the mirror of "pypi:NAME", tagged
// with its version, whose tree is the sdist's files.
struct SdistSource {
  std::string repository;  // "pypi:torch-scatter"
  std::string ref;         // the version: that mirror's tag
  SdistOrigin origin;
  std::vector<std::string> notes;  // what the user should know (a cached file that changed, a yanked release)
};

// Gets sdists from the package index pip is configured with (index-url,
// extra-index-url, find-links, no-index, cert, trusted-host, proxy and
// timeout, from pip's config files and PIP_* variables) without running
// any of the package's code: archbuild's own fetcher
// (recipes/frontends/sdist_fetch.py, run with the configured interpreter)
// reads the simple index and downloads the file; pip download would build
// the package's metadata, which runs its setup.py. Downloads are kept under
// <cache>/sdists/NAME/ with the sha256 they had (the index's, checked, when
// it gives one), and that sha256 is checked again on every later use.
class SdistFetcher {
 public:
  // Every index, find-links and download URL goes through `rewriter` (--mirror, [mirrors]).
  explicit SdistFetcher(const Settings& settings, UrlRewriter rewriter = {}, SdistLimits limits = {});

  // The sdist of NAME==VERSION, from the cache or downloaded (never when
  // offline), read (sdist_archive.h) and committed to the mirror. Throws
  // UserError: bad_input for no such sdist or a refused archive, environment
  // for an unreachable index, a hash mismatch, or offline without it. A
  // refused or mismatching download is removed, and nothing else is kept.
  // An empty `spec.version` takes the newest release that has an sdist on
  // the index (pip's choice: no pre-release while there is a final one,
  // no yanked file), and a note says which; offline it needs a version.
  SdistSource prepare(const PypiSpec& spec, const MirrorCache& mirrors) const;
  // A local sdist file (`archbuild build ./pkg-1.0.tar.gz`), read like a
  // download: its name and version from the file name, its sha256 in the
  // key, its files a commit of the mirror of that path.
  SdistSource prepare_local(const std::filesystem::path& archive, const PypiSpec& spec,
                            const MirrorCache& mirrors) const;
  // `cache gc`: removes the download dirs (<cache>/sdists/NAME/.download-*)
  // that an interrupted fetch left and whose writers are gone (the fetcher's
  // own test: unlocked, its archbuild no longer running). Returns what went
  // (or, with `dry_run`, would go); best effort, never throws for a failure.
  std::vector<std::string> remove_stale_downloads(bool dry_run) const;

 private:
  // The fetcher's command line: the interpreter, the script, the rewrites, `arguments`.
  std::vector<std::string> fetcher_command(const std::vector<std::string>& arguments) const;
  std::string newest_version(const std::string& name, std::vector<std::string>& notes) const;

  const Settings& settings_;
  UrlRewriter rewriter_;
  SdistLimits limits_;
};

}  // namespace archbuild
