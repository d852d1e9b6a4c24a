#include "builder/plan_facts.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "test_support.h"

using namespace archbuild;

TEST(PlanFacts, DetectsSetupPyWithoutNinja) {
  auto dir = std::filesystem::temp_directory_path() / ("archbuild-setup-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  EXPECT_FALSE(compiles_one_file_at_a_time(dir));  // no setup.py
  std::ofstream(dir / "setup.py") << "cmdclass={'build_ext': BuildExtension}\n";
  EXPECT_FALSE(compiles_one_file_at_a_time(dir));
  // pytorch_scatter's line
  std::ofstream(dir / "setup.py") << "BuildExtension.with_options(no_python_abi_suffix=True, use_ninja=False)\n";
  EXPECT_TRUE(compiles_one_file_at_a_time(dir));
  std::filesystem::remove_all(dir);
}

TEST(PlanFacts, SetuptoolsOutputsNotACMakeBuildDir) {
  auto dir = std::filesystem::temp_directory_path() / ("archbuild-stale-" + std::to_string(getpid()));
  EXPECT_TRUE(setuptools_build_outputs(dir).empty());  // no build/ at all
  for (const char* sub : {"build/temp.linux-x86_64-cpython-312/csrc", "build/lib.linux-x86_64-cpython-312/pkg",
                          "build/bdist.linux-x86_64", "build/CMakeFiles", "build/library"})
    std::filesystem::create_directories(dir / sub);
  std::ofstream(dir / "build" / "lib.txt") << "a file, not setuptools' dir\n";
  auto outputs = setuptools_build_outputs(dir);
  ASSERT_EQ(outputs.size(), 3u);
  EXPECT_EQ(outputs[0].filename(), "bdist.linux-x86_64");
  EXPECT_EQ(outputs[1].filename(), "lib.linux-x86_64-cpython-312");
  EXPECT_EQ(outputs[2].filename(), "temp.linux-x86_64-cpython-312");
  std::filesystem::remove_all(dir);
}

TEST(PlanFacts, GatherReadsTheWorkTreeAndTheInterpreter) {
  auto dir = std::filesystem::temp_directory_path() / ("archbuild-facts-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir / ".git");
  std::filesystem::create_directories(dir / "csrc");
  std::ofstream(dir / "csrc" / "a.cu") << "\n";
  std::ofstream(dir / "csrc" / "b.cu") << "\n";
  record_configure_inputs(dir, {{"TORCH_CUDA_ARCH_LIST", "9.0"}});
  auto facts = gather_plan_facts(dir, "python3");
  EXPECT_EQ(facts.cuda_files, 2u);
  EXPECT_FALSE(facts.one_file_at_a_time);
  ASSERT_TRUE(facts.recorded_configure_inputs.has_value());
  EXPECT_EQ(facts.recorded_configure_inputs->at("TORCH_CUDA_ARCH_LIST"), "9.0");
  EXPECT_EQ(facts.python_tag.rfind("cp3", 0), 0u) << facts.python_tag;
  EXPECT_GE(facts.cores, 1u);
  EXPECT_FALSE(facts.self_executable.empty());
  std::filesystem::remove_all(dir);
}

TEST(PlanFacts, UseNinjaScanIsLinearAndExact) {
  EXPECT_TRUE(says_use_ninja_false("BuildExtension.with_options(use_ninja=False)"));
  EXPECT_TRUE(says_use_ninja_false("use_ninja \t=\n  False"));
  EXPECT_TRUE(says_use_ninja_false("use_ninja use_ninja = False"));
  EXPECT_FALSE(says_use_ninja_false("use_ninja=True"));
  EXPECT_FALSE(says_use_ninja_false("use_ninja == False"));
  EXPECT_FALSE(says_use_ninja_false("use_ninja = "));
  EXPECT_FALSE(says_use_ninja_false("use_ninja"));
  EXPECT_FALSE(says_use_ninja_false(""));
  // What overflowed std::regex's recursive matcher: a long run of white space
  // after the key, then the match (or not) at its end.
  const std::string spaces(800000, ' ');
  EXPECT_TRUE(says_use_ninja_false("use_ninja" + spaces + "=" + spaces + "False"));
  EXPECT_FALSE(says_use_ninja_false("use_ninja" + spaces + "=" + spaces + "True"));
}

TEST(PlanFacts, SetupPyIsReadBoundedAndOnlyWhenARegularFile) {
  TempDir dir("archbuild-setup-bounded");
  // a file over the cap is not read: a huge one costs nothing
  write(dir.path / "setup.py", std::string(kMaxSetupPyBytes, '#') + "\nuse_ninja=False\n");
  EXPECT_FALSE(compiles_one_file_at_a_time(dir.path));
  write(dir.path / "setup.py", std::string(kMaxSetupPyBytes - 20, '#') + "\nuse_ninja=False\n");
  EXPECT_TRUE(compiles_one_file_at_a_time(dir.path));
  // a link to a device that never ends, and a FIFO that would block, are not read
  std::filesystem::remove(dir.path / "setup.py");
  std::filesystem::create_symlink("/dev/zero", dir.path / "setup.py");
  EXPECT_FALSE(compiles_one_file_at_a_time(dir.path));
  std::filesystem::remove(dir.path / "setup.py");
  ASSERT_EQ(mkfifo((dir.path / "setup.py").c_str(), 0600), 0);
  EXPECT_FALSE(compiles_one_file_at_a_time(dir.path));
}
