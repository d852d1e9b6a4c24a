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
  std::vector<std::string> own_names;  // everything archbuild writes there (an older archbuild's dir is adopted)
  std::string what;                    // "the build output dir (--out)"
  // When set, a directory without the marker is adopted only when it holds
  // one of these (names only archbuild writes: key.txt), not merely names
  // anyone might use (wheels/, tmp/).
  std::vector<std::string> evidence;

  // Refuses (UserError, bad input, naming the path and why) a symbolic link,
  // something that is not a directory, a marker that is not a regular file,
  // and a directory without the marker that holds anything not in
  // `own_names`, or none of `evidence`. Absent or empty is fine. Writes nothing.
  void check() const;
  // check(), then creates the directory and writes the marker (saying what
  // archbuild removes there): from then on the directory is archbuild's.
  void claim() const;
  bool owns(const std::string& name) const;  // the marker or one of own_names
};

}  // namespace archbuild
