// Helpers shared by the tests of pipeline/.
#pragma once

#include <string>

namespace archbuild {

// A recipe built by `{python} build-NAME.py {wheel_dir}` from a repository
// that is never fetched (the tests fake the checkout), in the cmake dialect.
inline std::string recipe_toml(const std::string& name, const std::string& depends_on) {
  return "name = \"" + name + "\"\ndescription = \"a unit-test recipe\"\nrepository = \"file:///nonexistent/" + name +
         ".git\"\ndefault_ref = \"v1.0\"\nsubmodules = false\narch_dialect = \"cmake\"\njob_memory_gb = 1.0\n"
         "depends_on = [" +
         depends_on + "]\n\n[[build]]\nversions = \"*\"\nsystem = \"setup.py\"\ncommand = [\"{python}\", \"build-" +
         name + ".py\", \"{wheel_dir}\"]\n";
}

}  // namespace archbuild
