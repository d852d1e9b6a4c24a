#include "source/source_target.h"

#include <algorithm>
#include <filesystem>
#include <optional>

#include "core/error.h"
#include "core/strings.h"
#include "source/git_session.h"
#include "source/local_head.h"

namespace archbuild {

namespace {
bool looks_like_url(const std::string& text) {
  if (text.find("://") != std::string::npos) return true;
  auto colon = text.find(':');
  auto at = text.find('@');
  return at != std::string::npos && colon != std::string::npos && at < colon;  // git@host:org/repo
}

}  // namespace

SourceTarget resolve_source_target(const std::string& what, const std::string& ref_option, const RecipeBook& book,
                                   const MirrorCache& mirrors, bool offline, const std::string& recipe_option) {
  SourceTarget target;
  std::optional<LocalHead> local;
  const Recipe* named = nullptr;
  if (!recipe_option.empty()) {
    named = book.find(recipe_option);
    if (!named) fail_bad_input("--recipe " + recipe_option + ": no such recipe (see `archbuild recipes`)");
    if (book.find(what)) fail_bad_input("--recipe goes with a PATH or URL, not with the recipe name '" + what + "'");
  }
  if (const Recipe* recipe = book.find(what); recipe && recipe->repository.empty())
    fail_bad_input("recipe " + what + " has no repository of its own: give a PATH or URL and --recipe " + what);
  if (const Recipe* recipe = book.find(what); recipe && !recipe->repository.empty()) {
    target.name = recipe->name;
    target.url = recipe->repository;
    target.recipe = recipe;
    target.submodules = recipe->submodules;
  } else {
    std::error_code ec;
    if (std::filesystem::is_directory(what, ec)) {
      auto dir = std::filesystem::absolute(what).lexically_normal();
      if (!std::filesystem::exists(dir / ".git", ec) && !std::filesystem::exists(dir / "HEAD", ec))
        fail_bad_input("'" + what +
                       "' is a directory but not a git repository (archbuild checks out commits, "
                       "so a source tree needs its history; run `git init && git add -A && git commit` there)");
      target.url = dir.string();
      if (ref_option.empty()) local = read_local_head(dir);
    } else if (looks_like_url(what)) {
      target.url = what;
    } else {
      std::vector<std::string> names;
      for (const auto& recipe : book.all())
        if (!recipe.repository.empty()) names.push_back(recipe.name);
      fail_bad_input("'" + what + "' is not a recipe (" + join(names, ", ") +
                     "), a directory, or a git URL (https://..., file://..., git@host:path)");
    }
    target.name = path_safe(repository_short_name(target.url));
    target.recipe = named ? named : book.find("cpp-extension");
    if (named) target.submodules = named->submodules;
  }
  if (!ref_option.empty()) {
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
  } else if (target.recipe && !target.recipe->default_ref.empty() && target.recipe->repository == target.url)
    target.ref = target.recipe->default_ref;
  else
    target.ref = mirrors.default_branch(target.url, offline);
  if (target.recipe)
    for (const auto& file : book.resolve(*target.recipe, target.ref).patch_files)
      target.patches.push_back({file, "recipe"});
  return target;
}

}  // namespace archbuild
