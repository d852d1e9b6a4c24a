#include "pipeline/session_services.h"

#include <sys/stat.h>

#include <algorithm>

#include <gtest/gtest.h>

#include "test_support.h"

using namespace archbuild;

TEST(SessionServices, TheCxxRuntimeTrialLinkRunsOncePerCompilerAndLinksDir) {
  TempDir dir;
  // A compiler that records each run and links nothing: every trial link fails.
  const auto compiler = dir.path / "c++";
  write(compiler, "#!/bin/sh\necho run >> '" + (dir.path / "runs").string() + "'\nexit 1\n");
  ::chmod(compiler.c_str(), 0755);
  auto runs = [&] {
    const auto text = read(dir.path / "runs");
    return std::count(text.begin(), text.end(), '\n');
  };
  SystemServices services;
  const auto first = services.cxx_runtime_link(compiler.string(), dir.path / "links");
  EXPECT_FALSE(first.probed);
  EXPECT_FALSE(first.not_probed.empty());
  const auto after_first = runs();
  EXPECT_GE(after_first, 1);
  // A dependency's build in the same run asks again: the answer, not another trial.
  const auto again = services.cxx_runtime_link(compiler.string(), dir.path / "links");
  EXPECT_EQ(again.not_probed, first.not_probed);
  EXPECT_EQ(runs(), after_first);
  // Another links dir (another cache) is another question.
  services.cxx_runtime_link(compiler.string(), dir.path / "other-links");
  EXPECT_GT(runs(), after_first);
}
