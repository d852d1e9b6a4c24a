#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace archbuild {

// A directory archbuild writes into and removes from, given by a user (a
// build's --out, validation's --work-dir): it must be archbuild's before
// anything there is touched. Claimed with a marker file written first.
struct OwnedDir {
  std::filesystem::path dir;
  std::string marker;                  // ".archbuild-build"
  std::vector<std::string> own_names;  // everything archbuild writes there (what the marker says it removes)
  std::string what;                    // "the build output dir (--out)"

  // Refuses (UserError, bad input, naming the path and why) a symbolic link,
  // something that is not a directory, a marker that is not a regular file,
  // and a directory without the marker that holds anything at all: a
  // directory archbuild did not mark is never written into. Absent or empty
  // is fine. Writes nothing.
  void check() const;
  // check(), then creates the directory and writes the marker (saying what
  // archbuild removes there): from then on the directory is archbuild's.
  void claim() const;
  bool owns(const std::string& name) const;  // the marker or one of own_names
};

}  // namespace archbuild
