#include "pipeline/session_services.h"

#include <sys/stat.h>

#include <algorithm>

#include <gtest/gtest.h>

#include "test_support.h"

using namespace archbuild;

namespace {

// A compiler that records each run in DIR/runs and then does what `body` says.
std::filesystem::path recording_compiler(const TempDir& dir, const std::string& body) {
  const auto compiler = dir.path / "c++";
  write(compiler, "#!/bin/sh\necho run >> '" + (dir.path / "runs").string() + "'\n" + body + "\n");
  ::chmod(compiler.c_str(), 0755);
  return compiler;
}

long runs_of(const TempDir& dir) {
  const auto text = read(dir.path / "runs");
  return std::count(text.begin(), text.end(), '\n');
}

}  // namespace

TEST(SessionServices, TheCxxRuntimeTrialLinkRunsOncePerCompilerAndLinksDir) {
  TempDir dir;
  // This machine's own compiler, through a wrapper that counts the trials.
  const auto compiler = recording_compiler(dir, "exec c++ \"$@\"");
  SystemServices services;
  const auto first = services.cxx_runtime_link(compiler.string(), dir.path / "links");
  ASSERT_TRUE(first.probed) << first.not_probed;
  const auto after_first = runs_of(dir);
  EXPECT_GE(after_first, 1);
  // A dependency's build in the same run asks again: the answer, not another trial.
  const auto again = services.cxx_runtime_link(compiler.string(), dir.path / "links");
  EXPECT_TRUE(again.probed);
  EXPECT_EQ(again.static_by_default, first.static_by_default);
  EXPECT_EQ(runs_of(dir), after_first);
  // Another links dir (another cache) is another question.
  services.cxx_runtime_link(compiler.string(), dir.path / "other-links");
  EXPECT_GT(runs_of(dir), after_first);
}

TEST(SessionServices, ATrialLinkThatCouldNotRunIsTriedAgain) {
  TempDir dir;
  // Links nothing: every trial fails, as one killed on a loaded machine would.
  const auto compiler = recording_compiler(dir, "exit 1");
  SystemServices services;
  const auto first = services.cxx_runtime_link(compiler.string(), dir.path / "links");
  EXPECT_FALSE(first.probed);
  EXPECT_FALSE(first.not_probed.empty());
  const auto after_first = runs_of(dir);
  EXPECT_GE(after_first, 1);
  services.cxx_runtime_link(compiler.string(), dir.path / "links");
  EXPECT_GT(runs_of(dir), after_first);
}
