#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace archbuild {

// PEP 503: lowercase, runs of '-', '_' and '.' become one '-'.
std::string normalize_project_name(const std::string& name);

struct IndexedWheel {
  std::string project;  // normalized
  std::filesystem::path file;
  std::string sha256;
};

// A PEP 503 simple index over every wheel in `wheels_dir`: <index>/index.html
// lists the projects, <index>/<project>/index.html links each wheel (relative
// href, #sha256= fragment). Each page is written to a temporary file and
// renamed into place, so a reader never sees half a page; pages of projects
// that have no wheel any more are removed. `include` (optional) picks which
// wheel files of the directory are listed.
std::vector<IndexedWheel> write_simple_index(const std::filesystem::path& wheels_dir,
                                             const std::filesystem::path& index_dir,
                                             const std::function<bool(const std::string& file_name)>& include = {});

}  // namespace archbuild
