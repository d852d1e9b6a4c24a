#include "process/layered_venv.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/regular_file.h"
#include "core/strings.h"
#include "process/run_process.h"

namespace archbuild {

std::string make_layered_venv(const std::string& python, const std::filesystem::path& dir) {
  std::filesystem::remove_all(dir);
  // Without ensurepip (3 s of the 4 a venv takes): the parent's pip, seen
  // through the .pth below, installs into the venv all the same.
  auto created = run_process({python, "-m", "venv", "--without-pip", dir.string()});
  if (!created.succeeded())
    fail_environment("cannot create a venv with " + python + " at " + dir.string() + ": " + trim(created.err));
  const std::string venv_python = (dir / "bin" / "python").string();
  auto sites = run_process({python, "-c",
                            "import site; print('\\n'.join(site.getsitepackages() + "
                            "([site.getusersitepackages()] if site.ENABLE_USER_SITE else [])))"});
  auto own = run_process({venv_python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"});
  if (!sites.succeeded() || !own.succeeded()) fail_environment("cannot read the site-packages of " + python);
  // Each one added as a site dir, not a plain path line: its own .pth files
  // run too, as in python itself (setuptools' distutils shim, which code
  // importing distutils on Python 3.12 needs; a parent venv's own layers).
  // Once each (Python reads a venv's .pth files twice), and only a dir that is there.
  std::string pth;
  for (const auto& site : split_any(sites.out, "\n")) {
    if (trim(site).empty()) continue;
    std::string literal;
    try {
      literal = nlohmann::json(trim(site)).dump(-1, ' ', true);  // ASCII: .pth files are read in the locale's encoding
    } catch (const nlohmann::json::exception&) {
      fail_environment("a site dir of " + python + " is not UTF-8: " + trim(site));
    }
    pth += "import os, site, sys; d = " + literal + "; d in sys.path or not os.path.isdir(d) or site.addsitedir(d)\n";
  }
  write_whole_file(std::filesystem::path(trim(own.out)) / "archbuild-parent-site.pth", pth);
  if (!run_process({venv_python, "-m", "pip", "--version"}).succeeded()) {
    auto pip = run_process({venv_python, "-m", "ensurepip", "--default-pip"});
    if (!pip.succeeded())
      fail_environment("no pip for the venv at " + dir.string() + " (" + python +
                       " has none, and ensurepip failed: " + trim(pip.err) + ")");
  }
  return venv_python;
}

}  // namespace archbuild
