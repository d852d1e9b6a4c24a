#include "pipeline/build_context.h"

#include <gtest/gtest.h>

#include "arch/arch_spec.h"
#include "core/error.h"
#include "pipeline/pipeline_test_support.h"
#include "test_support.h"

using namespace archbuild;

namespace {

class BuildContextTest : public PipelineTest {};

}  // namespace

TEST(BuildIntent, KeepsWhatWasAskedAsTypedValues) {
  BuildRequest request;
  request.rebuild = request.allow_network = true;
  request.no_validate = true;
  request.max_failed_tests = 2;
  request.torch_wheel = "wheels/torch-2.11.0-cp311-cp311-linux_x86_64.whl";
  request.mirrors = {"https://a/=file:///b/"};
  auto intent = BuildIntent::of(request);
  EXPECT_TRUE(intent.rebuild && intent.allow_network);
  EXPECT_FALSE(intent.keep_project_archs);
  EXPECT_FALSE(intent.validation.validate);
  EXPECT_EQ(intent.validation.max_failed_tests, 2u);
  EXPECT_FALSE(intent.validation.test_timeout_seconds);
  EXPECT_EQ(intent.torch.kind, TorchSource::Kind::wheel);
  EXPECT_EQ(intent.torch.describe(), "--torch-wheel wheels/torch-2.11.0-cp311-cp311-linux_x86_64.whl");
  EXPECT_EQ(intent.mirrors, request.mirrors);

  BuildRequest installed;
  installed.use_installed_torch = true;
  EXPECT_EQ(BuildIntent::of(installed).torch.kind, TorchSource::Kind::installed);
  EXPECT_TRUE(BuildIntent::of(BuildRequest{}).torch.from_cache());
  EXPECT_TRUE(BuildIntent::of(BuildRequest{}).validation.validate);
}

TEST_F(BuildContextTest, ResolvesARecipeForTheAskedArchsWithoutWritingForAPlan) {
  auto asked = request("fixture");
  asked.rebuild = true;
  auto context = BuildContext::resolve(asked, BuildContext::CacheUse::plan);
  EXPECT_EQ(context.target.name, "fixture");
  EXPECT_EQ(context.archs.list.canonical(), "9.0");
  EXPECT_TRUE(context.archs_origin.empty());  // --arch gave them
  EXPECT_TRUE(context.intent.rebuild);
  EXPECT_EQ(context.compiler_launcher, CompilerLauncher::none);
  EXPECT_EQ(context.out_dir.parent_path(), dir_.path / "cache" / "builds");
  EXPECT_FALSE(std::filesystem::exists(dir_.path / "cache"));  // a plan writes nothing
}

TEST_F(BuildContextTest, ADependencyTakesItsParentsListAsAValue) {
  auto asked = request("fixture");
  asked.arch.clear();
  asked.archs = parse_arch_list("8.0;9.0+PTX");
  auto context = BuildContext::resolve(asked, BuildContext::CacheUse::plan);
  EXPECT_EQ(context.archs.list.canonical(), "8.0;9.0+PTX");
  // an arch the toolkit cannot target is refused as --arch would be
  asked.archs = parse_arch_list("3.5");
  EXPECT_EQ(code_of([&] { BuildContext::resolve(asked, BuildContext::CacheUse::plan); }), ExitCode::environment);
}

TEST_F(BuildContextTest, WithoutArchsAnExtensionNeedsATorchToInheritFrom) {
  auto asked = request("companion");
  asked.arch.clear();
  try {
    BuildContext::resolve(asked, BuildContext::CacheUse::plan);
    FAIL() << "resolved without an arch list";
  } catch (const UserError& error) {
    EXPECT_EQ(error.code(), ExitCode::bad_input);
    EXPECT_NE(std::string(error.what()).find("the cache holds no fixture built by archbuild"), std::string::npos)
        << error.what();
  }
  // a recipe that builds against nothing has nothing to inherit
  asked.what = "fixture";
  EXPECT_EQ(code_of([&] { BuildContext::resolve(asked, BuildContext::CacheUse::plan); }), ExitCode::bad_input);
}

TEST_F(BuildContextTest, PlanInputsTakeTheMachinesNetworkProbeAndTheIntent) {
  auto asked = request("fixture");
  asked.keep_project_archs = true;
  auto context = BuildContext::resolve(asked, BuildContext::CacheUse::plan);
  NetworkIsolationProbe probe;
  probe.mode = NetworkIsolation::user_network_namespace;
  auto inputs = context.plan_inputs(std::nullopt, "/usr/bin/python3", probe);
  EXPECT_EQ(inputs.network.mode, NetworkIsolation::user_network_namespace);
  EXPECT_FALSE(inputs.allow_network);
  EXPECT_FALSE(inputs.enforce_archs);  // --keep-project-archs
  EXPECT_EQ(inputs.archs.canonical(), "9.0");
  EXPECT_EQ(inputs.source_dir, context.source_dir);

  asked.allow_network = true;
  asked.keep_project_archs = false;
  auto open = BuildContext::resolve(asked, BuildContext::CacheUse::plan).plan_inputs(std::nullopt, "python3", probe);
  EXPECT_TRUE(open.allow_network);
  EXPECT_EQ(open.network.mode, NetworkIsolation::unavailable);  // not probed: the step may reach the network
  EXPECT_TRUE(open.enforce_archs);
}

TEST_F(BuildContextTest, AUsersOutDirHoldingOtherFilesIsRefusedBeforeAnythingIsWritten) {
  write(dir_.path / "mine" / "notes.txt", "mine");
  auto asked = request("fixture");
  asked.out = dir_.path / "mine";
  EXPECT_EQ(code_of([&] { BuildContext::resolve(asked); }), ExitCode::bad_input);
  EXPECT_FALSE(std::filesystem::exists(dir_.path / "cache"));
  EXPECT_EQ(read(dir_.path / "mine" / "notes.txt"), "mine");
}
