#include "validate/test_dependencies.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/strings.h"
#include "process/layered_venv.h"
#include "process/run_process.h"
#include "test_support.h"
#include "wheel/wheel_test_support.h"

using namespace archbuild;

TEST(TestDependencies, ReadsWhatTheProjectDeclaresForItsTests) {
  TempDir project("archbuild-testdeps");
  write(project.path / "pyproject.toml",
        "[project]\nname = \"demo\"\n[project.optional-dependencies]\n"
        "test = [\"pytest>=7\", \"expecttest\"]\ndocs = [\"sphinx\"]\ndev = [\"pytest>=7\", \"ruff\"]\n");
  write(project.path / "requirements-test.txt", "# for the suite\nscipy  # numerics\n-r requirements.txt\n");
  write(project.path / "requirements" / "test-gpu.txt", "einops\n");
  write(project.path / "requirements.txt", "numpy\n");  // the package's own, not the tests'
  auto declared = declared_test_requirements(project.path);
  EXPECT_EQ(declared.requirements, (std::vector<std::string>{"pytest>=7", "expecttest", "ruff", "scipy", "einops"}));
  EXPECT_EQ(declared.origins, (std::vector<std::string>{"pyproject.toml [project.optional-dependencies] test",
                                                        "pyproject.toml [project.optional-dependencies] dev",
                                                        "requirements-test.txt", "requirements/test-gpu.txt"}));
  ASSERT_EQ(declared.notes.size(), 1u);
  EXPECT_NE(declared.notes[0].find("'-r requirements.txt' is a pip option"), std::string::npos);
}

TEST(TestDependencies, ABrokenPyprojectIsANoteNotAFailure) {
  TempDir project("archbuild-testdeps");
  write(project.path / "pyproject.toml", "[project\n");
  auto declared = declared_test_requirements(project.path);
  EXPECT_TRUE(declared.requirements.empty());
  ASSERT_EQ(declared.notes.size(), 1u);
  EXPECT_NE(declared.notes[0].find("pyproject.toml not read"), std::string::npos);
  EXPECT_TRUE(declared_test_requirements(project.path / "absent").requirements.empty());
}

TEST(TestDependencies, ModulesMapToTheirDistributions) {
  EXPECT_EQ(distributions_for_modules({"yaml", "scipy", "cv2", "PIL", "yaml"}),
            (std::vector<std::string>{"PyYAML", "scipy", "opencv-python", "Pillow"}));
  EXPECT_FALSE(TestDependencySource{}.any());
  EXPECT_EQ((TestDependencySource{{"/w"}, true}).describe(), "the wheelhouse /w and pip's index");
}

TEST(TestDependencies, InstallsFromAWheelhouseIntoTheVenvAndNamesWhatIsMissing) {
  if (!find_on_path("python3")) GTEST_SKIP() << "no python3 on PATH";
  TempDir dir("archbuild-testdeps");
  std::filesystem::create_directories(dir.path / "wheelhouse");
  write_minimal_wheel(dir.path / "wheelhouse", "abtestdep", "py3-none-any");
  std::string venv_python;
  try {
    venv_python = make_layered_venv("python3", dir.path / "venv");
  } catch (const UserError& error) {
    GTEST_SKIP() << "no venv here: " << error.what();
  }
  TestDependencyInstall install;
  const TestDependencySource source{{(dir.path / "wheelhouse").string()}, false};
  install_test_dependencies(venv_python, {"abtestdep", "abnotthere"}, source, dir.path / "deps.log", dir.path, install);
  EXPECT_EQ(install.installed, std::vector<std::string>{"abtestdep"});
  EXPECT_EQ(install.unavailable, std::vector<std::string>{"abnotthere"});
  EXPECT_EQ(install.summary(), "installed for the tests from the wheelhouse " + (dir.path / "wheelhouse").string() +
                                   ": abtestdep; not in the wheelhouse " + (dir.path / "wheelhouse").string() +
                                   ": abnotthere");
  // into the venv, never the interpreter it was made from
  EXPECT_TRUE(run_process({venv_python, "-c", "import abtestdep"}).succeeded());
  EXPECT_FALSE(run_process({"python3", "-c", "import abtestdep"}).succeeded());
  EXPECT_NE(read(dir.path / "deps.log").find("--no-index"), std::string::npos);  // the wheelhouse only
}

TEST(LayeredVenv, SeesTheParentsPackagesAndRunsTheParentsPthFilesThroughTwoLayers) {
  // A parent venv whose site-packages holds a package and a .pth file that
  // runs code, as setuptools' distutils-precedence.pth does.
  TempDir dir("archbuild-layers");
  std::string parent;
  try {
    parent = make_layered_venv("python3", dir.path / "parent");
  } catch (const UserError& error) {
    GTEST_SKIP() << "no venv here: " << error.what();
  }
  const auto site = trim(run_process({parent, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"}).out);
  write(std::filesystem::path(site) / "abparentpkg.py", "VALUE = 7\n");
  // counts its runs: once per interpreter, though Python reads a venv's .pth files twice
  write(std::filesystem::path(site) / "abhook.pth",
        "import os; os.environ['AB_PTH_RAN'] = str(int(os.environ.get('AB_PTH_RAN', '0')) + 1)\n");
  const auto child = make_layered_venv(parent, dir.path / "child");
  const auto grandchild = make_layered_venv(child, dir.path / "grandchild");
  for (const auto& python : {child, grandchild}) {
    const auto seen = run_process(
        {python, "-c", "import os, abparentpkg; print(abparentpkg.VALUE, os.environ.get('AB_PTH_RAN'))"});
    EXPECT_TRUE(seen.succeeded()) << python << ": " << seen.err;
    EXPECT_EQ(trim(seen.out), "7 1") << python;
  }
  // the venv's own packages come first
  const auto child_site = trim(
      run_process({child, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"}).out);
  write(std::filesystem::path(child_site) / "abparentpkg.py", "VALUE = 8\n");
  EXPECT_EQ(trim(run_process({grandchild, "-c", "import abparentpkg; print(abparentpkg.VALUE)"}).out), "8");
}
