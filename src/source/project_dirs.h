#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace archbuild {

// A directory of a source tree that is a Python project of its own (it
// holds a setup.py or a pyproject.toml): what `--subdirectory` can name.
struct ProjectDir {
  std::string path;           // relative to the tree; "" for its top
  bool cuda_sources = false;  // .cu files lie under it
};

// The project directories of `root`, top first then by path, read without
// following a symlink and skipping hidden, build and dist directories;
// bounded (depth and entries) so that a huge tree costs little.
std::vector<ProjectDir> find_project_dirs(const std::filesystem::path& root);

// "--subdirectory a/b (CUDA sources), --subdirectory c": the directories
// other than `except` to name in a message, those with CUDA sources first.
std::string describe_project_dirs(const std::vector<ProjectDir>& dirs, const std::string& except);

}  // namespace archbuild
