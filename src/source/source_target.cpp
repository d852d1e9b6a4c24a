#include "source/source_target.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <stdexcept>

#include "core/cache_layout.h"
#include "core/error.h"
#include "core/sha256.h"
#include "core/strings.h"
#include "recipe/repository_url.h"
#include "source/git_ref_name.h"
#include "source/git_session.h"
#include "source/local_head.h"
#include "source/pip_vcs_url.h"
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

std::filesystem::path without_trailing_slash(std::filesystem::path path) {
  path = path.lexically_normal();
  if (path.filename().empty() && path.has_parent_path()) path = path.parent_path();
  return path;
}

// Where a local directory lies: the top of the git repository it belongs
// to and its place inside it, or no repository. A directory inside a
// repository that tracks nothing under it (an unpacked tarball in a home
// directory kept in git) is a plain directory.
struct LocalPlace {
  std::filesystem::path root;  // the repository's top (a bare repository: itself)
  std::string inside;          // "" at the top
  bool repository = false;
};

LocalPlace place_of(const std::filesystem::path& dir) {
  ensure_libgit2();
  LocalPlace place{dir, "", false};
  if (std::filesystem::exists(dir / "HEAD") && std::filesystem::is_directory(dir / "objects")) {
    place.repository = true;  // a bare repository: its commits, no working tree
    return place;
  }
  git_buf found = GIT_BUF_INIT;
  if (git_repository_discover(&found, dir.c_str(), 0, nullptr) != 0) return place;
  std::string git_dir(found.ptr, found.size);
  git_buf_dispose(&found);
  git_repository* raw = nullptr;
  if (git_repository_open(&raw, git_dir.c_str()) != 0) return place;
  Repository repo(raw);
  const char* workdir = git_repository_workdir(repo.get());
  if (!workdir) return place;
  const auto root = without_trailing_slash(workdir);
  const auto inside = dir.lexically_relative(root).generic_string();
  if (inside.empty() || inside.starts_with("..")) return place;
  if (inside != ".") {
    git_index* raw_index = nullptr;
    if (git_repository_index(&raw_index, repo.get()) != 0) return place;
    GitIndex index(raw_index);
    size_t position = 0;
    if (git_index_find_prefix(&position, index.get(), (inside + "/").c_str()) != 0) return place;  // nothing tracked
  }
  return {root, inside == "." ? "" : inside, true};
}

std::string join_subdirectory(const std::string& outer, const std::string& inner) {
  if (outer.empty()) return inner;
  if (inner.empty()) return outer;
  return outer + "/" + inner;
}

// `name-1.0.tar.gz` -> ("name", "1.0"): the version is what follows the last '-'.
std::pair<std::string, std::string> archive_name_and_version(const std::filesystem::path& archive) {
  std::string stem = archive.filename().string();
  for (const char* extension : {".tar.gz", ".tgz", ".tar", ".zip"})
    if (stem.ends_with(extension)) {
      stem.erase(stem.size() - std::string(extension).size());
      break;
    }
  const auto dash = stem.rfind('-');
  if (dash == std::string::npos || dash == 0 || dash + 1 == stem.size() || !valid_project_name(stem.substr(0, dash)))
    fail_bad_input("'" + archive.string() +
                   "': an sdist's file name is NAME-VERSION.tar.gz (or .zip), and this one does not say its name "
                   "and version");
  return {canonical_project_name(stem.substr(0, dash)), stem.substr(dash + 1)};
}

}  // namespace

std::string SourceTarget::identity() const {
  std::string base = sdist ? std::string(kPypiPrefix) + sdist->project : repository_identity(url);
  if (base.empty()) base = url;  // a local path
  return subdirectory.empty() ? base : base + "#subdirectory=" + subdirectory;
}

namespace {
// The work tree (and build dir) of a name and ref belongs to one source: a
// second source of the same name and ref (two forks both called `samename`,
// `pypi:mixpkg==1.0` beside a git repository `mixpkg` at tag 1.0) gets its
// URL's hash in the name instead of checking out over the first one's.
std::string distinct_work_tree_name(const CacheLayout& cache, const SourceTarget& target) {
  const auto dir = cache.worktree(target.name, target.work_tree_name);
  std::error_code ec;
  if (!std::filesystem::is_directory(dir / ".git", ec)) return target.work_tree_name;
  std::string origin;
  try {
    Repository repo = open_repository(dir.string());
    git_remote* remote = nullptr;
    if (git_remote_lookup(&remote, repo.get(), "origin") == 0) {
      if (const char* url = git_remote_url(remote)) origin = url;
      git_remote_free(remote);
    }
  } catch (const UserError&) {
    // not readable as a repository: the checkout will say so
  }
  // The same repository however it is spelled (https or ssh, with or without .git) is the same source.
  const auto identity = repository_identity(origin);
  if (origin.empty() || origin == target.url || (!identity.empty() && identity == repository_identity(target.url)))
    return target.work_tree_name;
  return target.work_tree_name + "-" + sha256_hex(target.url).substr(0, 8);
}
}  // namespace

SourceTarget resolve_source_target(const SourceQuery& query, const RecipeBook& book, const MirrorCache& mirrors,
                                   bool offline, const SdistFetcher* sdists, const UrlRewriter* rewriter) {
  const std::string& what = query.what;
  std::string ref_option = query.ref;
  SourceTarget target;
  std::optional<LocalHead> local;
  std::optional<LocalPlace> place;
  std::optional<PypiSpec> pypi;
  std::optional<std::filesystem::path> archive;
  std::string subdirectory = checked_subdirectory(query.subdirectory, "--subdirectory");
  const Recipe* named = nullptr;
  if (!query.recipe.empty()) {
    named = book.find(query.recipe);
    if (!named) fail_bad_input("--recipe " + query.recipe + ": no such recipe (see `archbuild recipes`)");
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
  std::error_code ec;
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
  } else if (std::filesystem::is_regular_file(what, ec) && is_sdist_file_name(what)) {
    archive = std::filesystem::absolute(what).lexically_normal();
    auto [project, version] = archive_name_and_version(*archive);
    if (!ref_option.empty()) fail_bad_input("--ref does not go with the sdist " + what + ": its version is " + version);
    pypi = PypiSpec{project, version};
    const Recipe* matched = by_repository(std::string(kPypiPrefix) + project);
    target.name = matched ? matched->name : project;
    target.recipe = named ? named : matched ? matched : book.find("cpp-extension");
  } else {
    const Recipe* matched = nullptr;
    if (std::filesystem::is_directory(what, ec)) {
      const auto dir = without_trailing_slash(std::filesystem::absolute(what));
      place = place_of(dir);
      if (!place->repository && !ref_option.empty())
        fail_bad_input("--ref " + ref_option + " names a commit, and " + what +
                       " is no git repository: it is built as it is on disk, without --ref");
      target.url = place->root.string();
      subdirectory = join_subdirectory(place->inside, subdirectory);
      // A local tree is often a fork with build needs of its own: its origin
      // remote suggests a recipe, it does not pick one.
      if (!named && place->repository)
        if (const Recipe* suggested = book.find_by_repository(origin_remote_url(place->root)))
          target.notes.push_back("its origin remote is the repository of recipe " + suggested->name + ": --recipe " +
                                 suggested->name + " builds it with that recipe");
      if (place->repository && ref_option.empty()) local = read_local_head(place->root);
    } else if (is_pip_vcs_url(what)) {
      auto pip_url = parse_pip_vcs_url(what);
      if (!pip_url.ref.empty() && !ref_option.empty() && pip_url.ref != ref_option)
        fail_bad_input("'" + what + "' names the ref " + pip_url.ref + " and --ref names " + ref_option + ": give one");
      if (!pip_url.subdirectory.empty() && !subdirectory.empty() && pip_url.subdirectory != subdirectory)
        fail_bad_input("'" + what + "' names #subdirectory=" + pip_url.subdirectory + " and --subdirectory " +
                       subdirectory + ": give one");
      if (!pip_url.ref.empty()) ref_option = pip_url.ref;
      if (!pip_url.subdirectory.empty()) subdirectory = pip_url.subdirectory;
      target.url = pip_url.url;
      matched = by_repository(target.url);
    } else if (looks_like_url(what)) {
      target.url = what;
      matched = by_repository(what);
    } else {
      std::vector<std::string> names;
      for (const auto& recipe : book.all())
        if (!recipe.repository.empty()) names.push_back(recipe.name);
      fail_bad_input("'" + what + "' is not a recipe (" + join(names, ", ") +
                     "), a directory, an sdist file (.tar.gz, .zip), a git URL (https://..., "
                     "git+https://...@REF#subdirectory=DIR, file://..., git@host:path) or pypi:NAME[==VERSION]");
    }
    const auto base_name = path_safe(repository_short_name(target.url));
    target.name = matched ? matched->name : base_name;
    target.recipe = named ? named : matched ? matched : book.find("cpp-extension");
    if (named || matched) target.submodules = target.recipe->submodules;
  }
  const bool recipe_repository = target.recipe && same_repository(target.recipe->repository, target.url);
  if (subdirectory.empty() && recipe_repository) subdirectory = target.recipe->subdirectory;
  target.subdirectory = subdirectory;
  // Two projects of one repository are two names: their work trees, build
  // dirs and histories stay apart.
  if (!subdirectory.empty() && !recipe_repository)
    target.name += "-" + path_safe(std::filesystem::path(subdirectory).filename().string());

  if (pypi) {
    if (!sdists) throw std::logic_error("resolve_source_target: an sdist needs an SdistFetcher");
    SdistSource sdist;
    if (archive) {
      sdist = sdists->prepare_local(*archive, *pypi, mirrors);
    } else {
      // The version: the spec's, --ref, the default_ref of the recipe whose repository it is, or the newest.
      std::string version = pypi->version;
      if (version.empty())
        version = !ref_option.empty() ? ref_option : recipe_repository ? target.recipe->default_ref : "";
      if (!version.empty()) check_pypi_version(version, what);
      sdist = sdists->prepare({pypi->name, version}, mirrors);
    }
    target.url = sdist.repository;
    target.ref = sdist.ref;
    target.sdist = sdist.origin;
    target.submodules = false;  // an sdist holds its files, no submodule commits
    target.notes.insert(target.notes.end(), sdist.notes.begin(), sdist.notes.end());
  } else if (!ref_option.empty()) {
    // Caught here, before any fetch: `../../etc` is no ref, and retrying a fetch will not make it one.
    if (!is_valid_git_ref_name(ref_option))
      fail_bad_input("--ref '" + ref_option + "' is not a valid git ref name (a tag, branch or commit)");
    target.ref = ref_option;
    // A ref the repository lacks is said before anything is planned (plan too).
    mirrors.check_ref(rewriter ? rewriter->apply(target.url) : target.url, ref_option, offline);
  } else if (place && !place->repository) {
    target.snapshot = snapshot_directory(place->root, mirrors.path_for(target.url));
    target.ref = target.snapshot->commit;
    target.work_tree_name = "local";
    target.submodules = false;
    target.notes.push_back(
        "building the directory " + target.url + " as it is on disk: " + std::to_string(target.snapshot->files) +
        " files, snapshot " + target.snapshot->commit.substr(0, 12) +
        (target.snapshot->dropped.empty() ? "" : "; left out VCS metadata: " + join(target.snapshot->dropped, ", ")));
  } else if (local) {
    // The exact commit, never a branch name a mirror may hold an older commit of.
    // A local path is no network access: offline or not, the mirror takes what it lacks.
    const auto head = mirrors.ensure({target.url, local->commit, std::nullopt, false, false});
    target.ref = head.commit;
    target.work_tree_name = path_safe(local->ref);
    target.snapshot = snapshot_working_tree(place->root, mirrors.path_for(target.url));
    if (!target.snapshot) {
      target.notes.push_back("building " + target.url + "'s " + local->description + " (--ref picks a commit)");
    } else {
      target.snapshot->base_description = local->description;
      target.ref = target.snapshot->commit;
      const auto& edited = target.snapshot->edited;
      std::vector<std::string> shown(edited.begin(), edited.begin() + std::min<size_t>(5, edited.size()));
      target.warnings.push_back("building " + target.url + " as it is on disk: " + local->description + " and " +
                                std::to_string(edited.size()) + " edited path" + (edited.size() == 1 ? "" : "s") +
                                " (" + join(shown, ", ") + (edited.size() > 5 ? ", ..." : "") + "), snapshot " +
                                target.snapshot->commit.substr(0, 12) + " (--ref builds a commit exactly)");
    }
  } else if (recipe_repository && !target.recipe->default_ref.empty())
    target.ref = target.recipe->default_ref;
  else
    target.ref = mirrors.default_branch(rewriter ? rewriter->apply(target.url) : target.url, offline);
  if (target.work_tree_name.empty()) target.work_tree_name = target.ref;
  target.work_tree_name = distinct_work_tree_name(CacheLayout(mirrors.cache_dir()), target);
  if (target.recipe)
    for (const auto& file : book.resolve(*target.recipe, target.ref).patch_files)
      target.patches.push_back({file, "recipe"});
  return target;
}

}  // namespace archbuild
