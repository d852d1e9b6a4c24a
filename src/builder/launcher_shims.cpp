#include "builder/launcher_shims.h"

#include "builder/step_launcher.h"
#include "core/cache_layout.h"
#include "core/error.h"
#include "core/regular_file.h"
#include "core/sha256.h"
#include "core/strings.h"
#include "process/run_process.h"

namespace archbuild {

std::filesystem::path ccache_masquerade_dir(const std::filesystem::path& cache_dir) {
  return CacheLayout(cache_dir).ccache_masquerade();
}

void ensure_ccache_masquerade(const std::filesystem::path& cache_dir) {
  auto ccache = find_on_path("ccache");
  if (!ccache) return;
  auto dir = ccache_masquerade_dir(cache_dir);
  std::filesystem::create_directories(dir);
  for (const char* name : {"cc", "gcc", "c++", "g++", "clang", "clang++"}) place_needed_symlink(*ccache, dir / name);
}

std::filesystem::path launcher_toolkit_dir(const std::filesystem::path& cache_dir, const std::string& launcher,
                                           const std::filesystem::path& toolkit_root, const std::string& self) {
  // One per launcher, toolkit and archbuild binary; the hash keeps them apart.
  return CacheLayout(cache_dir).launcher_toolkits() / ((launcher.empty() ? "archbuild" : launcher) + "-" +
                                                       sha256_hex(toolkit_root.string() + "\n" + self).substr(0, 12));
}

void ensure_launcher_toolkit(const std::filesystem::path& dir, const std::string& self,
                             const std::filesystem::path& launcher_path, const std::filesystem::path& toolkit_root) {
  std::error_code ec;
  std::filesystem::create_directories(dir / "bin", ec);
  if (ec) fail_environment("cannot create " + (dir / "bin").string() + ": " + ec.message());
  for (const auto& entry : std::filesystem::directory_iterator(toolkit_root))
    if (entry.path().filename() != "bin") place_needed_symlink(entry.path(), dir / entry.path().filename());
  for (const auto& entry : std::filesystem::directory_iterator(toolkit_root / "bin"))
    if (entry.path().filename() != "nvcc") place_needed_symlink(entry.path(), dir / "bin" / entry.path().filename());
  // The real nvcc finds its own components (nvcc.profile, ptxas, cicc)
  // next to itself, so the script execs it by its real path. Written aside
  // and renamed in: a concurrent build running nvcc sees the old script or
  // the new one, never half of one.
  const auto script = dir / "bin" / "nvcc";
  const std::string text =
      "#!/bin/sh\n# archbuild: nvcc through archbuild's step launcher" +
      (launcher_path.empty() ? "" : " and the compiler launcher (" + launcher_path.filename().string() + ")") +
      "\nexec " + shell_quote(self) + " " + kStepLauncherCommand + " " +
      (launcher_path.empty() ? "" : shell_quote(launcher_path.string()) + " ") +
      shell_quote((toolkit_root / "bin" / "nvcc").string()) + " \"$@\"\n";
  try {
    write_file_atomically(script, text,
                          std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                              std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                              std::filesystem::perms::others_exec);
  } catch (const std::filesystem::filesystem_error& error) {
    fail_environment("cannot write " + script.string() + ": " + error.code().message());
  }
}

}  // namespace archbuild
