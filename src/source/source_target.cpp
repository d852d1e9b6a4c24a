#include "source/source_target.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <stdexcept>

#include "core/error.h"
#include "core/strings.h"
#include "recipe/repository_url.h"
#include "source/git_session.h"
#include "source/local_head.h"
#include "source/pypi_sdist.h"

namespace archbuild {

namespace {
bool looks_like_url(const std::string& text) {
  if (text.find("://") != std::string::npos) return true;
  auto colon = text.find(':');
  auto at = text.find('@');
  return at != std::string::npos && colon != std::string::npos && at < colon;  // git@host:org/repo
}

// The URL of a local repository's `origin` remote, or "".
std::string origin_remote_url(const std::filesystem::path& dir) {
  ensure_libgit2();
  git_repository* raw = nullptr;
  if (git_repository_open(&raw, dir.c_str()) != 0) return "";
  Repository repo(raw);
  git_remote* remote = nullptr;
  if (git_remote_lookup(&remote, repo.get(), "origin") != 0) return "";
  GitRemote holder(remote);
  const char* url = git_remote_url(remote);
  return url ? url : "";
}

}  // namespace

SourceTarget resolve_source_target(const std::string& what, const std::string& ref_option, const RecipeBook& book,
                                   const MirrorCache& mirrors, bool offline, const std::string& recipe_option,
                                   const SdistFetcher* sdists, const UrlRewriter* rewriter) {
  SourceTarget target;
  std::optional<LocalHead> local;
  std::optional<PypiSpec> pypi;
  const Recipe* named = nullptr;
  if (!recipe_option.empty()) {
    named = book.find(recipe_option);
    if (!named) fail_bad_input("--recipe " + recipe_option + ": no such recipe (see `archbuild recipes`)");
    if (book.find(what))
      fail_bad_input("--recipe goes with a PATH, URL or pypi:NAME==VERSION, not with the recipe name '" + what + "'");
  }
  // The recipe a URL (or pypi:NAME) is the repository of, unless --recipe names one.
  auto by_repository = [&](const std::string& url) -> const Recipe* {
    if (named) return nullptr;
    const Recipe* matched = book.find_by_repository(url);
    if (matched)
      target.notes.push_back("using recipe " + matched->name + " for " + what + " (its repository is " +
                             matched->repository + "; --recipe picks another)");
    return matched;
  };
  if (const Recipe* recipe = book.find(what); recipe && recipe->repository.empty())
    fail_bad_input("recipe " + what + " has no repository of its own: give a PATH or URL and --recipe " + what);
  if (const Recipe* recipe = book.find(what); recipe && !recipe->repository.empty()) {
    target.name = recipe->name;
    target.url = recipe->repository;
    target.recipe = recipe;
    target.submodules = recipe->submodules;
    if (is_pypi_repository(recipe->repository))
      pypi = PypiSpec{canonical_project_name(recipe->repository.substr(kPypiPrefix.size())), ""};
  } else if (is_pypi_repository(what)) {
    pypi = parse_pypi_spec(what);
    if (!pypi->version.empty() && !ref_option.empty())
      fail_bad_input("--ref does not go with " + what +
                     ": the version is its ref (pypi:NAME --ref VERSION also works)");
    target.url = std::string(kPypiPrefix) + pypi->name;
    const Recipe* matched = by_repository(target.url);
    target.name = matched ? matched->name : pypi->name;
    target.recipe = named ? named : matched ? matched : book.find("cpp-extension");
  } else {
    std::error_code ec;
    const Recipe* matched = nullptr;
    if (std::filesystem::is_directory(what, ec)) {
      auto dir = std::filesystem::absolute(what).lexically_normal();
      if (!std::filesystem::exists(dir / ".git", ec) && !std::filesystem::exists(dir / "HEAD", ec))
        fail_bad_input("'" + what +
                       "' is a directory but not a git repository (archbuild checks out commits, "
                       "so a source tree needs its history; run `git init && git add -A && git commit` there)");
      target.url = dir.string();
      if (ref_option.empty()) local = read_local_head(dir);
      // A local tree is often a fork with build needs of its own: its origin
      // remote suggests a recipe, it does not pick one.
      if (!named)
        if (const Recipe* suggested = book.find_by_repository(origin_remote_url(dir)))
          target.notes.push_back("its origin remote is the repository of recipe " + suggested->name + ": --recipe " +
                                 suggested->name + " builds it with that recipe");
    } else if (looks_like_url(what)) {
      target.url = what;
      matched = by_repository(what);
    } else {
      std::vector<std::string> names;
      for (const auto& recipe : book.all())
        if (!recipe.repository.empty()) names.push_back(recipe.name);
      fail_bad_input("'" + what + "' is not a recipe (" + join(names, ", ") +
                     "), a directory, a git URL (https://..., file://..., git@host:path) or pypi:NAME==VERSION");
    }
    target.name = matched ? matched->name : path_safe(repository_short_name(target.url));
    target.recipe = named ? named : matched ? matched : book.find("cpp-extension");
    if (named || matched) target.submodules = target.recipe->submodules;
  }
  const bool recipe_repository = target.recipe && same_repository(target.recipe->repository, target.url);
  if (pypi) {
    // The version: the spec's, --ref, or the default_ref of the recipe whose repository it is.
    std::string version = pypi->version;
    if (version.empty())
      version = !ref_option.empty() ? ref_option : recipe_repository ? target.recipe->default_ref : "";
    if (version.empty())
      fail_bad_input(what +
                     " needs an exact version: pypi:NAME==VERSION (one sdist, so that the build can be "
                     "repeated)");
    check_pypi_version(version, what);
    if (!sdists) throw std::logic_error("resolve_source_target: an sdist needs an SdistFetcher");
    auto sdist = sdists->prepare({pypi->name, version}, mirrors);
    target.url = sdist.repository;
    target.ref = sdist.ref;
    target.sdist = sdist.origin;
    target.submodules = false;  // an sdist holds its files, no submodule commits
    target.notes.insert(target.notes.end(), sdist.notes.begin(), sdist.notes.end());
  } else if (!ref_option.empty()) {
    // Caught here, before any fetch: `../../etc` is no ref, and retrying a fetch will not make it one.
    int valid = 0;
    ensure_libgit2();
    if (git_reference_name_is_valid(&valid, ("refs/tags/" + ref_option).c_str()) != 0 || !valid ||
        ref_option.starts_with("-"))
      fail_bad_input("--ref '" + ref_option + "' is not a valid git ref name (a tag, branch or commit)");
    target.ref = ref_option;
  } else if (local) {
    target.ref = local->ref;
    target.notes.push_back("building " + target.url + "'s " + local->description + " (--ref picks another)");
    if (!local->uncommitted.empty()) {
      std::vector<std::string> shown(local->uncommitted.begin(),
                                     local->uncommitted.begin() + std::min<size_t>(5, local->uncommitted.size()));
      target.notes.push_back(std::to_string(local->uncommitted.size()) + " uncommitted change" +
                             (local->uncommitted.size() == 1 ? "" : "s") + " not built (" + join(shown, ", ") +
                             (local->uncommitted.size() > 5 ? ", ..." : "") +
                             "): archbuild builds commits; commit them, or pass them as --patch");
    }
  } else if (recipe_repository && !target.recipe->default_ref.empty())
    target.ref = target.recipe->default_ref;
  else
    target.ref = mirrors.default_branch(rewriter ? rewriter->apply(target.url) : target.url, offline);
  if (target.recipe)
    for (const auto& file : book.resolve(*target.recipe, target.ref).patch_files)
      target.patches.push_back({file, "recipe"});
  return target;
}

}  // namespace archbuild
