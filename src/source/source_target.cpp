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

namespace {

// One resolution of what a build was asked to build: the kind of target
// (a recipe, pypi:NAME, an sdist file, a directory, a URL) first, then its
// subdirectory, then its ref. Each step is a method over the state they share.
class TargetResolution {
 public:
  TargetResolution(const SourceQuery& query, const RecipeBook& book, const MirrorCache& mirrors, bool offline,
                   const SdistFetcher* sdists, const UrlRewriter* rewriter)
      : query_(query),
        what_(query.what),
        book_(book),
        mirrors_(mirrors),
        offline_(offline),
        sdists_(sdists),
        rewriter_(rewriter),
        ref_option_(query.ref),
        subdirectory_(checked_subdirectory(query.subdirectory, "--subdirectory")) {}

  SourceTarget run() {
    check_named_recipe();
    std::error_code ec;
    if (const Recipe* recipe = book_.find(what_); recipe && recipe->repository.empty())
      fail_bad_input("recipe " + what_ + " has no repository of its own: give a PATH or URL and --recipe " + what_);
    if (const Recipe* recipe = book_.find(what_); recipe && !recipe->repository.empty())
      from_recipe(*recipe);
    else if (is_pypi_repository(what_))
      from_pypi_spec();
    else if (std::filesystem::is_regular_file(what_, ec) && is_sdist_file_name(what_))
      from_sdist_file();
    else
      from_location();
    settle_subdirectory();
    settle_ref();
    if (target_.work_tree_name.empty()) target_.work_tree_name = target_.ref;
    target_.work_tree_name = distinct_work_tree_name(CacheLayout(mirrors_.cache_dir()), target_);
    if (target_.recipe)
      for (const auto& file : book_.resolve(*target_.recipe, target_.ref).patch_files)
        target_.patches.push_back({file, "recipe"});
    return std::move(target_);
  }

 private:
  void check_named_recipe() {
    if (query_.recipe.empty()) return;
    named_ = book_.find(query_.recipe);
    if (!named_) fail_bad_input("--recipe " + query_.recipe + ": no such recipe (see `archbuild recipes`)");
    if (book_.find(what_))
      fail_bad_input("--recipe goes with a PATH, URL or pypi:NAME==VERSION, not with the recipe name '" + what_ + "'");
  }

  // The recipe a URL (or pypi:NAME) is the repository of, unless --recipe names one.
  const Recipe* by_repository(const std::string& url) {
    if (named_) return nullptr;
    const Recipe* matched = book_.find_by_repository(url);
    if (matched)
      target_.notes.push_back("using recipe " + matched->name + " for " + what_ + " (its repository is " +
                              matched->repository + "; --recipe picks another)");
    return matched;
  }

  void use_recipe(const Recipe* matched, const std::string& fallback_name) {
    target_.name = matched ? matched->name : fallback_name;
    target_.recipe = named_ ? named_ : matched ? matched : book_.find("cpp-extension");
  }

  void from_recipe(const Recipe& recipe) {
    target_.name = recipe.name;
    target_.url = recipe.repository;
    target_.recipe = &recipe;
    target_.submodules = recipe.submodules;
    if (is_pypi_repository(recipe.repository))
      pypi_ = PypiSpec{canonical_project_name(recipe.repository.substr(kPypiPrefix.size())), ""};
  }

  // The recipe of the PyPI project NAME: one whose repository is pypi:NAME,
  // or a git repository's recipe that names NAME as its `pypi` project.
  const Recipe* by_pypi_name(const std::string& project) {
    if (named_) return nullptr;
    const Recipe* matched = book_.find_by_pypi_name(project);
    if (matched && matched->pypi_name == project)
      target_.notes.push_back("using recipe " + matched->name + " for " + what_ + " (the recipe of the PyPI project " +
                              project + ", whose repository is " + matched->repository + "; --recipe picks another)");
    else if (matched)
      return by_repository(std::string(kPypiPrefix) + project);
    return matched;
  }

  void from_pypi_spec() {
    pypi_ = parse_pypi_spec(what_);
    if (!pypi_->version.empty() && !ref_option_.empty())
      fail_bad_input("--ref does not go with " + what_ +
                     ": the version is its ref (pypi:NAME --ref VERSION also works)");
    target_.url = std::string(kPypiPrefix) + pypi_->name;
    use_recipe(by_pypi_name(pypi_->name), pypi_->name);
  }

  void from_sdist_file() {
    archive_ = std::filesystem::absolute(what_).lexically_normal();
    auto [project, version] = archive_name_and_version(*archive_);
    if (!ref_option_.empty())
      fail_bad_input("--ref does not go with the sdist " + what_ + ": its version is " + version);
    pypi_ = PypiSpec{project, version};
    use_recipe(by_pypi_name(project), project);
  }

  // A directory, a pip VCS URL or a git URL.
  void from_location() {
    const Recipe* matched = nullptr;
    std::error_code ec;
    if (std::filesystem::is_directory(what_, ec))
      matched = from_directory();
    else if (is_pip_vcs_url(what_))
      matched = from_pip_vcs_url();
    else if (looks_like_url(what_))
      matched = by_repository(target_.url = what_);
    else
      fail_unknown_target();
    use_recipe(matched, path_safe(repository_short_name(target_.url)));
    if (named_ || matched) target_.submodules = target_.recipe->submodules;
  }

  // A local clone of a recipe's repository (its origin remote) is built
  // with that recipe, as its URL would be; the note says how to build it
  // without (a fork with build needs of its own).
  const Recipe* from_directory() {
    const auto dir = without_trailing_slash(std::filesystem::absolute(what_));
    place_ = place_of(dir);
    if (!place_->repository && !ref_option_.empty())
      fail_bad_input("--ref " + ref_option_ + " names a commit, and " + what_ +
                     " is no git repository: it is built as it is on disk, without --ref");
    target_.url = place_->root.string();
    subdirectory_ = join_subdirectory(place_->inside, subdirectory_);
    if (place_->repository && ref_option_.empty()) local_ = read_local_head(place_->root);
    if (named_ || !place_->repository) return nullptr;
    const auto origin = origin_remote_url(place_->root);
    const Recipe* matched = book_.find_by_repository(origin);
    if (!matched) return nullptr;
    origin_is_recipe_repository_ = true;
    target_.notes.push_back("using recipe " + matched->name + " for " + what_ + " (its origin remote " + origin +
                            " is the recipe's repository; --recipe cpp-extension builds it without)");
    return matched;
  }

  const Recipe* from_pip_vcs_url() {
    auto pip_url = parse_pip_vcs_url(what_);
    if (!pip_url.ref.empty() && !ref_option_.empty() && pip_url.ref != ref_option_)
      fail_bad_input("'" + what_ + "' names the ref " + pip_url.ref + " and --ref names " + ref_option_ + ": give one");
    if (!pip_url.subdirectory.empty() && !subdirectory_.empty() && pip_url.subdirectory != subdirectory_)
      fail_bad_input("'" + what_ + "' names #subdirectory=" + pip_url.subdirectory + " and --subdirectory " +
                     subdirectory_ + ": give one");
    if (!pip_url.ref.empty()) ref_option_ = pip_url.ref;
    if (!pip_url.subdirectory.empty()) subdirectory_ = pip_url.subdirectory;
    target_.url = pip_url.url;
    return by_repository(target_.url);
  }

  [[noreturn]] void fail_unknown_target() const {
    std::vector<std::string> names;
    for (const auto& recipe : book_.all())
      if (!recipe.repository.empty()) names.push_back(recipe.name);
    fail_bad_input("'" + what_ + "' is not a recipe (" + join(names, ", ") +
                   "), a directory, an sdist file (.tar.gz, .zip), a git URL (https://..., "
                   "git+https://...@REF#subdirectory=DIR, file://..., git@host:path) or pypi:NAME[==VERSION]");
  }

  void settle_subdirectory() {
    recipe_repository_ = target_.recipe &&
                         (origin_is_recipe_repository_ || same_repository(target_.recipe->repository, target_.url));
    if (subdirectory_.empty() && recipe_repository_) subdirectory_ = target_.recipe->subdirectory;
    target_.subdirectory = subdirectory_;
    // Two projects of one repository are two names: their work trees, build
    // dirs and histories stay apart.
    if (!subdirectory_.empty() && !recipe_repository_)
      target_.name += "-" + path_safe(std::filesystem::path(subdirectory_).filename().string());
  }

  std::string fetch_url() const { return rewriter_ ? rewriter_->apply(target_.url) : target_.url; }

  void settle_ref() {
    if (pypi_)
      from_sdist_source();
    else if (!ref_option_.empty())
      from_ref_option();
    else if (place_ && !place_->repository)
      from_plain_directory();
    else if (local_)
      from_local_head();
    else if (recipe_repository_ && !target_.recipe->default_ref.empty())
      target_.ref = target_.recipe->default_ref;
    else
      target_.ref = mirrors_.default_branch(fetch_url(), offline_);
  }

  void from_sdist_source() {
    if (!sdists_) throw std::logic_error("resolve_source_target: an sdist needs an SdistFetcher");
    SdistSource sdist;
    if (archive_) {
      sdist = sdists_->prepare_local(*archive_, *pypi_, mirrors_);
    } else {
      // The version: the spec's, --ref, the default_ref of the recipe whose repository it is, or the newest.
      std::string version = pypi_->version;
      if (version.empty())
        version = !ref_option_.empty() ? ref_option_ : recipe_repository_ ? target_.recipe->default_ref : "";
      if (!version.empty()) check_pypi_version(version, what_);
      try {
        sdist = sdists_->prepare({pypi_->name, version}, mirrors_);
      } catch (const UserError& error) {
        throw UserError(error.code(), error.what() + catalogued_elsewhere_hint());
      }
    }
    target_.url = sdist.repository;
    target_.ref = sdist.ref;
    target_.sdist = sdist.origin;
    target_.submodules = false;  // an sdist holds its files, no submodule commits
    target_.notes.insert(target_.notes.end(), sdist.notes.begin(), sdist.notes.end());
  }

  // A project the catalog builds from git (not from PyPI, where an sdist may be missing or stale):
  // the way to build it, for the error of a pypi: spec that found nothing to build.
  std::string catalogued_elsewhere_hint() const {
    if (recipe_repository_) return "";
    const Recipe* recipe = book_.find(pypi_->name);
    if (!recipe || is_pypi_repository(recipe->repository)) return "";
    return "; archbuild's recipe " + recipe->name + " builds it from " + recipe->repository + ": archbuild build " +
           recipe->name;
  }

  void from_ref_option() {
    // Caught here, before any fetch: `../../etc` is no ref, and retrying a fetch will not make it one.
    if (!is_valid_git_ref_name(ref_option_))
      fail_bad_input("--ref '" + ref_option_ + "' is not a valid git ref name (a tag, branch or commit)");
    target_.ref = ref_option_;
    // A ref the repository lacks is said before anything is planned (plan too).
    mirrors_.check_ref(fetch_url(), ref_option_, offline_);
  }

  void from_plain_directory() {
    target_.snapshot = snapshot_directory(place_->root, mirrors_.path_for(target_.url));
    target_.ref = target_.snapshot->commit;
    target_.work_tree_name = "local";
    target_.submodules = false;
    target_.notes.push_back(
        "building the directory " + target_.url + " as it is on disk: " + std::to_string(target_.snapshot->files) +
        " files, snapshot " + target_.snapshot->commit.substr(0, 12) +
        (target_.snapshot->dropped.empty() ? "" : "; left out VCS metadata: " + join(target_.snapshot->dropped, ", ")));
  }

  void from_local_head() {
    // The exact commit, never a branch name a mirror may hold an older commit of.
    // A local path is no network access: offline or not, the mirror takes what it lacks.
    const auto head = mirrors_.ensure({target_.url, local_->commit, std::nullopt, false, false});
    target_.ref = head.commit;
    target_.work_tree_name = path_safe(local_->ref);
    target_.snapshot = snapshot_working_tree(place_->root, mirrors_.path_for(target_.url));
    if (!target_.snapshot) {
      target_.notes.push_back("building " + target_.url + "'s " + local_->description + " (--ref picks a commit)");
      return;
    }
    target_.snapshot->base_description = local_->description;
    target_.ref = target_.snapshot->commit;
    const auto& edited = target_.snapshot->edited;
    std::vector<std::string> shown(edited.begin(), edited.begin() + std::min<size_t>(5, edited.size()));
    target_.warnings.push_back("building " + target_.url + " as it is on disk: " + local_->description + " and " +
                               std::to_string(edited.size()) + " edited path" + (edited.size() == 1 ? "" : "s") + " (" +
                               join(shown, ", ") + (edited.size() > 5 ? ", ..." : "") + "), snapshot " +
                               target_.snapshot->commit.substr(0, 12) + " (--ref builds a commit exactly)");
  }

  const SourceQuery& query_;
  const std::string& what_;
  const RecipeBook& book_;
  const MirrorCache& mirrors_;
  const bool offline_;
  const SdistFetcher* sdists_;
  const UrlRewriter* rewriter_;
  std::string ref_option_;
  std::string subdirectory_;
  const Recipe* named_ = nullptr;
  bool recipe_repository_ = false;
  bool origin_is_recipe_repository_ = false;  // a local clone picked its recipe by its origin remote
  SourceTarget target_;
  std::optional<LocalHead> local_;
  std::optional<LocalPlace> place_;
  std::optional<PypiSpec> pypi_;
  std::optional<std::filesystem::path> archive_;
};

}  // namespace

SourceTarget resolve_source_target(const SourceQuery& query, const RecipeBook& book, const MirrorCache& mirrors,
                                   bool offline, const SdistFetcher* sdists, const UrlRewriter* rewriter) {
  return TargetResolution(query, book, mirrors, offline, sdists, rewriter).run();
}

}  // namespace archbuild
