#pragma once

#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "wheel/project_name.h"

namespace archbuild {

struct IndexedWheel {
  std::string project;  // normalized
  std::filesystem::path file;
  std::string sha256;
};

// The file archbuild writes into every index dir it owns, before any page:
// a format line, then one `project NAME` line per project page it wrote.
inline constexpr const char* kIndexMarker = ".archbuild-index";
// PEP 825's index file of one version's variant wheels: {name}-{version}-variants.json.
inline constexpr std::string_view kVariantsSuffix = "-variants.json";

// Who owns an index dir. It is archbuild's when it is absent or empty, when
// it holds the marker (a regular file), or when it holds only what an older
// archbuild wrote without one (its own root page, project dirs holding only
// its own project page, `.tmp-` files), which is then adopted. Anything else
// is refused with exit 2 naming it, as is any symbolic link directly inside
// the dir: archbuild writes none there and follows none. The dir itself is
// the caller's to name (a link the user gave is followed).
void check_index_dir(const std::filesystem::path& index_dir);

// The file names of the wheels that the project pages archbuild wrote into
// `index_dir` link: its record of what it indexed. Empty when there is no
// such dir; refused as check_index_dir refuses.
std::set<std::string> linked_wheel_names(const std::filesystem::path& index_dir);

// A PEP 503 simple index over every wheel in `wheels_dir`: <index>/index.html
// lists the projects, <index>/<project>/index.html links each wheel (relative
// href, #sha256= fragment). Each page is written to a temporary file and
// renamed into place, so a reader never sees half a page. The dir must be
// archbuild's (check_index_dir); a project dir it did not write is refused,
// and of the projects that have no wheel any more it removes only the pages
// the marker records (the dir itself only when that leaves it empty).
// `include` (optional) picks which wheel files of the directory are listed.
std::vector<IndexedWheel> write_simple_index(const std::filesystem::path& wheels_dir,
                                             const std::filesystem::path& index_dir,
                                             const std::function<bool(const std::string& file_name)>& include = {});

// One project's page in place, for a publish at fleet scale: `added` linked
// (each replacing a link of the same file name), `dropped` file names no
// longer linked, every other link kept as the page had it; the marker and
// the root page gain the project when it is new. Nothing else is read or
// written. False, with nothing written, when the dir is not one this can
// update in place (no marker, a project dir that is not archbuild's page, a
// page left without links): the caller then writes the whole index.
bool update_project_page(const std::filesystem::path& index_dir, const std::string& project,
                         const std::vector<IndexedWheel>& added, const std::set<std::string>& dropped);

// The pages themselves, for an index kept elsewhere than a directory (a
// bucket): one owner of the page format for every index archbuild writes.
struct PageLink {
  std::string href;  // relative to the page, not yet percent-encoded
  std::string sha256;
  std::string file_name;
};
std::string project_page_html(const std::string& project, const std::vector<PageLink>& links);
std::string root_page_html(const std::set<std::string>& projects);

}  // namespace archbuild
