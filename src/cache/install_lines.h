#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace archbuild {

// How a user installs what was published: one line for pip and one for uv.
// The wheels are pinned to their exact local version, and so are the
// dependencies they were built against (`pinned`: "torch" ->
// "2.9.1+cu130.sm90"), so no other arch set of them is picked; every other
// requirement comes from the installer's default index (PyPI, or the
// site's). pip merges all its indexes and takes the highest version that
// matches, so the pins are what keeps it on archbuild's builds
// (`--extra-index-url`); uv takes a name from the first index that has it
// (`--index` comes before the default one).
std::vector<std::string> install_lines(const std::vector<std::filesystem::path>& wheels,
                                       const std::filesystem::path& simple_dir,
                                       const std::map<std::string, std::string>& pinned = {});

// What to put in pip.conf and uv.toml so that plain `pip install NAME==VER`
// and `uv pip install NAME==VER` find the index (text for humans, with the
// files' usual places).
std::string index_configuration(const std::filesystem::path& simple_dir);
// The same for an index served over HTTP (a bucket behind a server).
std::string index_configuration_for_url(const std::string& url);

}  // namespace archbuild
