#pragma once

#include <filesystem>
#include <string>

namespace archbuild {

// A new directory `parent/PREFIX-XXXXXX` made by mkdtemp: no one else can
// have made or linked it beforehand. Throws UserError(environment).
std::filesystem::path make_private_dir(const std::filesystem::path& parent, const std::string& prefix);

// The same, removed with everything in it when the value goes.
struct PrivateDir {
  std::filesystem::path path;
  PrivateDir(const std::filesystem::path& parent, const std::string& prefix) : path(make_private_dir(parent, prefix)) {}
  ~PrivateDir();
  PrivateDir(const PrivateDir&) = delete;
  PrivateDir& operator=(const PrivateDir&) = delete;
};

}  // namespace archbuild
