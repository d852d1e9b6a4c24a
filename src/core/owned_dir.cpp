#include "core/owned_dir.h"

#include <algorithm>

#include "core/error.h"
#include "core/regular_file.h"
#include "core/strings.h"

namespace archbuild {

bool OwnedDir::owns(const std::string& name) const {
  return name == marker || std::find(own_names.begin(), own_names.end(), name) != own_names.end();
}

void OwnedDir::check() const {
  std::error_code ec;
  const auto status = std::filesystem::symlink_status(dir, ec);
  if (!std::filesystem::exists(status)) return;
  auto refuse = [&](const std::string& why) {
    fail_bad_input("refusing " + what + " " + dir.string() + ": " + why +
                   "; give a new or empty directory, or one archbuild made (it carries " + marker + ")");
  };
  if (std::filesystem::is_symlink(status)) refuse("it is a symbolic link");
  if (!std::filesystem::is_directory(status)) refuse("it is not a directory");
  const auto marker_status = std::filesystem::symlink_status(dir / marker, ec);
  if (std::filesystem::is_regular_file(marker_status)) return;
  if (std::filesystem::exists(marker_status)) refuse(marker + " is not a regular file");
  // Without the marker archbuild did not make it: whatever it holds (even
  // only names archbuild uses, wheels/ or key.txt) is someone else's.
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    refuse("it holds " + entry.path().string() + " and no " + marker + ", so archbuild did not make it");
  if (ec) refuse("it cannot be read: " + ec.message());
}

void OwnedDir::claim() const {
  check();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) fail_environment("cannot create " + what + " " + dir.string() + ": " + ec.message());
  // Not written aside: its being there is what counts, and a temporary left
  // by a crash would be a file check() does not know.
  try {
    write_whole_file(dir / marker, "archbuild's " + what + ": it removes only " + join(own_names, ", ") + " here\n");
  } catch (const std::filesystem::filesystem_error& error) {
    fail_environment("cannot write " + (dir / marker).string() + ": " + error.code().message());
  }
}

}  // namespace archbuild
