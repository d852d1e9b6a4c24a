#include "cli/build_options.h"

#include <gtest/gtest.h>

#include "test_support.h"

using namespace archbuild;

TEST(EnvAssignments, ParsesKeyValueItems) {
  auto env = parse_env_assignments({"FORCE_CUDA=1", "EMPTY=", "URL=a=b"});
  EXPECT_EQ(env, (std::map<std::string, std::string>{{"FORCE_CUDA", "1"}, {"EMPTY", ""}, {"URL", "a=b"}}));
}

TEST(EnvAssignments, RefusesWhatArchbuildDecidesNamingTheOption) {
  EXPECT_NE(error_of([] { parse_env_assignments({"TORCH_CUDA_ARCH_LIST=9.0"}); }).find("use --arch"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_env_assignments({"MAX_JOBS=4"}); }).find("use --jobs"), std::string::npos);
  EXPECT_NE(error_of([] { parse_env_assignments({"ARCHBUILD_CACHE_DIR=/x"}); }).find("archbuild's own settings"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_env_assignments({"ARCHBUILD_STEP_LOG=/tmp/x"}); }).find("--env"), std::string::npos);
  EXPECT_NE(error_of([] { parse_env_assignments({"CUDA_HOME=/x"}); }).find("use --cuda"), std::string::npos);
  EXPECT_NO_THROW(parse_env_assignments({"ARCHBUILD_PARALLEL_SETUPTOOLS=0"}));
}

TEST(EnvAssignments, RefusesMalformedItems) {
  for (const char* item : {"NOEQUALS", "=value", "1X=2", "A-B=1", "A B=1"})
    EXPECT_NE(error_of([&] { parse_env_assignments({item}); }).find("expected KEY=VALUE"), std::string::npos) << item;
}

TEST(BuildOptions, TheRequestCarriesTheCheckedEnvironment) {
  BuildOptions options;
  options.what = "torch";
  options.env = {"FORCE_CUDA=1"};
  EXPECT_EQ(options.request().env.at("FORCE_CUDA"), "1");
  options.env = {"CUDA_HOME=/x"};
  EXPECT_THROW(options.request(), UserError);
}
