#include "validate/project_tests.h"

#include <stdlib.h>
#include <unistd.h>

#include <set>

#include <gtest/gtest.h>

#include "core/data_dir.h"
#include "core/error.h"
#include "process/run_process.h"
#include "test_support.h"

using namespace archbuild;

TEST(ProjectTests, ClassifiesFailuresByWhatTheyMean) {
  const std::vector<std::string> packages = {"torch_scatter"};
  const std::vector<std::pair<std::string, FailureKind>> cases = {
      {"RuntimeError: CUDA error: no kernel image is available for execution on the device", FailureKind::kernel},
      {"torch.AcceleratorError: CUDA error: an illegal memory access was encountered", FailureKind::kernel},
      {"CUDA_ERROR_INVALID_PTX: a PTX JIT compilation failed", FailureKind::kernel},
      {"RuntimeError: Found no NVIDIA driver on your system", FailureKind::environment},
      {"RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version",
       FailureKind::environment},
      {"ModuleNotFoundError: No module named 'scipy'", FailureKind::environment},
      {"ModuleNotFoundError: No module named 'torch_scatter._scatter_cuda'", FailureKind::test},
      {"ModuleNotFoundError: No module named 'torch_scatter'", FailureKind::test},
      {"AssertionError: assert 3 == 4", FailureKind::test},
  };
  for (const auto& [message, kind] : cases) EXPECT_EQ(classify_failure(message, packages), kind) << message;
}

TEST(ProjectTests, RunsPytestWithTheVenvInterpreter) {
  ProjectTests tests{{"pytest", "{source_dir}/test", "-k", "cuda"}};
  EXPECT_EQ(project_test_argv(tests, "/v/bin/python", "/src"),
            (std::vector<std::string>{"/v/bin/python", "-m", "pytest", "/src/test", "-k", "cuda"}));
  tests.command = {"{python}", "run_tests.py"};
  EXPECT_EQ(project_test_argv(tests, "/v/bin/python", "/src"),
            (std::vector<std::string>{"/v/bin/python", "run_tests.py"}));
}

TEST(ProjectTests, TheCommandLineWinsOverTheRecipe) {
  Recipe recipe;
  recipe.name = "proj";
  recipe.tests = ProjectTests{{"pytest", "test"}, 600, 2, {}};
  std::string origin;
  auto tests = choose_project_tests(&recipe, "", std::nullopt, std::nullopt, origin);
  ASSERT_TRUE(tests);
  EXPECT_EQ(origin, "recipe proj");
  EXPECT_EQ(tests->max_failed_tests, 2u);
  tests = choose_project_tests(&recipe, "pytest 'test/test a.py' -k cuda", 30.0, 0u, origin);
  EXPECT_EQ(origin, "--test");
  EXPECT_EQ(tests->command, (std::vector<std::string>{"pytest", "test/test a.py", "-k", "cuda"}));
  EXPECT_EQ(tests->timeout_seconds, 30.0);
  EXPECT_EQ(tests->max_failed_tests, 0u);
  EXPECT_THROW(choose_project_tests(&recipe, "pytest -k 'cuda", std::nullopt, std::nullopt, origin), UserError);
  Recipe bare;
  EXPECT_FALSE(choose_project_tests(&bare, "", std::nullopt, std::nullopt, origin));
  EXPECT_THROW(choose_project_tests(&bare, "", std::nullopt, 3u, origin), UserError);
}

TEST(ProjectTests, RecipeTestsTableIsChecked) {
  TempDir dir;
  auto recipe_file = [&](const std::string& tests) {
    auto file = dir.path / "recipes" / "proj.toml";
    write(file, "name = \"proj\"\narch_dialect = \"extension\"\n" + tests +
                    "\n[[build]]\nsystem = \"setup.py\"\ncommand = [\"{python}\", \"setup.py\"]\n");
    return file;
  };
  auto recipe = RecipeBook::parse_file(
      recipe_file("[tests]\ncommand = [\"pytest\", \"test\"]\ntimeout_s = 300\nmax_failed_tests = 1\n"
                  "requires = [\"pytest\", \"scipy\"]"),
      dir.path / "patches");
  ASSERT_TRUE(recipe.tests);
  EXPECT_EQ(recipe.tests->timeout_seconds, 300);
  EXPECT_EQ(recipe.tests->max_failed_tests, 1u);
  EXPECT_EQ(recipe.tests->required_modules, (std::vector<std::string>{"pytest", "scipy"}));
  for (const char* bad : {"[tests]\ncommand = []", "[tests]\ncommand = [\"pytest\"]\ntimeout_s = -1",
                          "[tests]\ncommand = [\"pytest\"]\nmax_failed_tests = -2",
                          "[tests]\ncommand = [\"pytest\"]\nretries = 3", "tests = \"pytest\""}) {
    try {
      RecipeBook::parse_file(recipe_file(bad), dir.path / "patches");
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("proj.toml:"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("tests"), std::string::npos) << e.what();
    }
  }
}

namespace {

// Real pytest, installed once into the test cache (as the CLI tests' other
// PyPI tools are); the suites below run as validation runs them.
std::filesystem::path pytest_dir() {
  const char* cache = std::getenv("ARCHBUILD_TEST_CACHE");
  const char* home = std::getenv("HOME");
  std::filesystem::path root = cache ? cache : std::filesystem::path(home ? home : "/tmp") / ".cache/archbuild-test";
  auto dir = root / "tools" / "pytest-8.3.4";
  if (std::filesystem::exists(dir / "pytest")) return dir;
  // Tests run at once (ctest -j) each install into a dir of their own; the
  // first rename wins and the others' copies are dropped.
  const std::string partial = dir.string() + ".tmp-" + std::to_string(::getpid());
  auto result = run_process({"python3", "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--target",
                             partial, "pytest==8.3.4"});
  if (!result.succeeded()) return {};
  std::error_code ignored;
  std::filesystem::rename(partial, dir, ignored);
  std::filesystem::remove_all(partial, ignored);
  return std::filesystem::exists(dir / "pytest") ? dir : std::filesystem::path{};
}

class ProjectSuite : public ::testing::Test {
 protected:
  void SetUp() override {
    pytest = pytest_dir();
    if (pytest.empty()) GTEST_SKIP() << "pytest could not be installed from PyPI (no network?)";
    // The "installed wheel": a site dir outside the tree; the tree's own copy must not be imported.
    write(site.path / "mypkg" / "__init__.py", "WHERE = 'installed'\n");
    write(source.path / "mypkg" / "__init__.py", "WHERE = 'source tree'\n");
    write(source.path / "tests" / "test_ops.py",
          "import os, time\n"
          "import mypkg\n"
          "def test_ok():\n    assert mypkg.WHERE == 'installed'\n"
          "def test_flaky():\n    assert 3 == 4\n"
          "def test_kernel():\n"
          "    raise RuntimeError('CUDA error: no kernel image is available for execution on the device')\n"
          "def test_env():\n    import scipy_is_not_here\n"
          "def test_slow():\n    time.sleep(60)\n");
    const char* inherited = std::getenv("PYTHONPATH");
    saved_pythonpath = inherited ? inherited : "";
    ::setenv("PYTHONPATH", (site.path.string() + ":" + pytest.string()).c_str(), 1);
  }
  // A command of the project's own (not pytest), run with the system's python3.
  ProjectTestRequest command_request(std::vector<std::string> command) const {
    ProjectTestRequest request;
    request.source_dir = source.path;
    request.venv_python = "python3";
    request.report_file = work.path / "report.jsonl";
    request.log_file = work.path / "tests.log";
    request.tests = ProjectTests{std::move(command), 60, 0, {}};
    return request;
  }
  void TearDown() override {
    if (!pytest.empty()) ::setenv("PYTHONPATH", saved_pythonpath.c_str(), 1);
  }

  ProjectTestResult run(const std::string& select, unsigned budget = 0, double timeout = 120) {
    ProjectTestRequest request;
    request.tests = ProjectTests{{"pytest", "tests", "-k", select}, timeout, budget, {}};
    request.origin = "--test";
    request.source_dir = source.path;
    request.venv_python = "python3";
    request.packages = {"mypkg"};
    request.plugin_dir = data_dir() / "recipes" / "tests" / "pytest";
    request.report_file = work.path / "report.jsonl";
    request.log_file = work.path / "tests.log";
    return run_project_tests(request);
  }

  std::set<std::string> tree_files() {
    std::set<std::string> files;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(source.path))
      files.insert(std::filesystem::relative(entry.path(), source.path).string());
    return files;
  }

  std::filesystem::path pytest;
  std::string saved_pythonpath;
  TempDir site{"archbuild-site"}, source{"archbuild-src"}, work{"archbuild-work"};
};

}  // namespace

TEST_F(ProjectSuite, PassesAgainstTheInstalledPackageAndWritesNothingIntoTheTree) {
  auto before = tree_files();
  auto result = run("ok");
  EXPECT_TRUE(result.ok) << result.summary << "\n" << read(work.path / "tests.log");
  EXPECT_EQ(result.passed, 1u);
  EXPECT_EQ(result.failed, 0u);
  EXPECT_EQ(tree_files(), before);  // no __pycache__, no .pytest_cache
}

TEST_F(ProjectSuite, FailuresWithinTheBudgetPassAndAreListed) {
  auto over = run("ok or flaky", 0);
  EXPECT_FALSE(over.ok);
  EXPECT_EQ(over.failure, FailureKind::test);
  EXPECT_NE(over.summary.find("over the failure budget of 0"), std::string::npos) << over.summary;
  auto within = run("ok or flaky", 1);
  EXPECT_TRUE(within.ok) << within.summary;
  ASSERT_EQ(within.failures.size(), 1u);
  EXPECT_EQ(within.failures[0].test, "tests/test_ops.py::test_flaky");
  EXPECT_NE(within.failures[0].message.find("assert 3 == 4"), std::string::npos) << within.failures[0].message;
  EXPECT_EQ(within.to_json()["max_failed_tests"], 1);
}

TEST_F(ProjectSuite, AKernelFailureIsNeverExcused) {
  auto result = run("ok or kernel", 5);
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.failure, FailureKind::kernel);
  ASSERT_EQ(result.failures.size(), 1u);
  EXPECT_EQ(result.failures[0].kind, FailureKind::kernel);
}

TEST_F(ProjectSuite, AMissingTestDependencyIsTheMachinesFault) {
  auto result = run("env");
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.failure, FailureKind::environment) << result.summary;
}

TEST_F(ProjectSuite, ASelectionThatRunsNothingIsASetupError) {
  auto result = run("no_such_test");
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.failure, FailureKind::setup) << result.summary;
}

TEST_F(ProjectSuite, TheTimeBudgetStopsTheSuiteAndKeepsWhatRan) {
  auto result = run("ok or slow", 0, 8);
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.failure, FailureKind::time);
  EXPECT_EQ(result.passed, 1u) << result.summary;
  EXPECT_LT(result.seconds, 50);
}

TEST_F(ProjectSuite, WithoutTheInstalledPackageTheTreesCopyIsNotUsed) {
  ::setenv("PYTHONPATH", pytest.c_str(), 1);  // mypkg only in the source tree
  auto result = run("ok");
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.failure, FailureKind::test) << result.summary;
  ASSERT_FALSE(result.failures.empty());
  EXPECT_NE(result.failures[0].message.find("No module named 'mypkg'"), std::string::npos)
      << result.failures[0].message;
}

TEST_F(ProjectSuite, MissingRequiredModulesStopBeforeRunning) {
  ProjectTestRequest request;
  request.tests = ProjectTests{{"pytest", "tests"}, 60, 0, {"not_a_module_anywhere"}};
  request.source_dir = source.path;
  request.venv_python = "python3";
  request.plugin_dir = data_dir() / "recipes" / "tests" / "pytest";
  request.report_file = work.path / "report.jsonl";
  request.log_file = work.path / "tests.log";
  auto result = run_project_tests(request);
  EXPECT_EQ(result.failure, FailureKind::environment);
  EXPECT_NE(result.summary.find("not_a_module_anywhere"), std::string::npos) << result.summary;
  EXPECT_FALSE(std::filesystem::exists(work.path / "tests.log"));  // nothing ran
}

TEST_F(ProjectSuite, OtherCommandsAreJudgedByTheirExitStatus) {
  auto request = command_request({"{python}", "-c", "print('fine')"});
  EXPECT_TRUE(run_project_tests(request).ok);
  request.tests =
      ProjectTests{{"{python}", "-c", "raise SystemExit('CUDA error: no kernel image is available')"}, 60, 3, {}};
  auto result = run_project_tests(request);
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.failure, FailureKind::kernel) << result.summary;
  request.tests = ProjectTests{{"no-such-program-here"}, 60, 0, {}};
  EXPECT_EQ(run_project_tests(request).failure, FailureKind::environment);
}

TEST_F(ProjectSuite, ACrashSaysWhereItHappened) {
  // a test script whose native call reads address 0: SIGSEGV, as a wrong pointer in an extension would
  write(source.path / "crash.py", "import ctypes\n\n\ndef test_null():\n    ctypes.string_at(0)\n\n\ntest_null()\n");
  auto result = run_project_tests(command_request({"{python}", "crash.py"}));
  EXPECT_FALSE(result.ok);
  ASSERT_EQ(result.failures.size(), 1u);
  const auto& detail = result.failures[0].message;
  EXPECT_NE(detail.find("killed by signal 11"), std::string::npos) << detail;
  EXPECT_NE(detail.find("Fatal Python error: Segmentation fault in File"), std::string::npos) << detail;
  EXPECT_NE(detail.find("in test_null"), std::string::npos) << detail;
}
