// Helpers shared by the tests of pipeline/.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "pipeline/build_request.h"
#include "test_support.h"

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

// A recipe dir with `fixture` and `companion` (built against fixture), and
// requests for them: --arch 9.0, offline, no launcher, a cache of the test's own.
class PipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    write(dir_.path / "recipes" / "fixture.toml", recipe_toml("fixture", ""));
    write(dir_.path / "recipes" / "companion.toml", recipe_toml("companion", "\"fixture\""));
  }
  BuildRequest request(const std::string& what) const {
    BuildRequest request;
    request.what = what;
    request.arch = "9.0";
    request.setting_flags = {{"cache_dir", (dir_.path / "cache").string()},
                             {"recipe_path", (dir_.path / "recipes").string()},
                             {"compiler_launcher", "none"},
                             {"offline", "true"}};
    return request;
  }
  TempDir dir_{"archbuild-pipeline"};
};

}  // namespace archbuild
