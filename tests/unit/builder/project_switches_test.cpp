#include "builder/project_switches.h"

#include <gtest/gtest.h>

using namespace archbuild;

TEST(ProjectSwitches, FindsTheProjectsForceBuildSwitches) {
  const std::string setup_py =
      "FORCE_BUILD = os.getenv(\"CAUSAL_CONV1D_FORCE_BUILD\", \"FALSE\") == \"TRUE\"\n"
      "SKIP = os.getenv('CAUSAL_CONV1D_SKIP_CUDA_BUILD')\n"
      "if os.getenv('FORCE_CUDA', '0') == '1': pass\n"
      "NOT_A_FORCE_CUDA_SWITCH = 1\n"
      "X_FORCE_BUILD = 3  # a variable, not quoted\n"
      "again = os.environ['CAUSAL_CONV1D_FORCE_BUILD']\n"
      "_FORCE_BUILD = 2  # no name before the suffix\n";
  EXPECT_EQ(force_build_switches(setup_py), (std::vector<std::string>{"CAUSAL_CONV1D_FORCE_BUILD", "FORCE_CUDA"}));
  EXPECT_TRUE(force_build_switches("").empty());
}

TEST(ProjectSwitches, ACmakeDownloadIsNamedWithoutItsCredentials) {
  // torch-kdtree 1.0: ExternalProject fetches Eigen while the build runs
  const auto hint = network_failure_hint(
      "-- Retry after 60 seconds (attempt #5) ...\n"
      "    error: downloading 'https://user:s3cret@gitlab.com/libeigen/eigen/-/archive/3.4.0/eigen-3.4.0.tar.bz2"
      "?private_token=glpat-t0ken' "
      "failed\n          status_string: \"Couldn't resolve host name\"\n  Could not resolve host: gitlab.com\n",
      "");
  EXPECT_NE(hint.find("its CMake build downloads https://"), std::string::npos) << hint;
  EXPECT_NE(hint.find("gitlab.com/libeigen/eigen/-/archive/3.4.0/eigen-3.4.0.tar.bz2 with ExternalProject"),
            std::string::npos)
      << hint;
  EXPECT_EQ(hint.find("s3cret"), std::string::npos) << hint;
  EXPECT_EQ(hint.find("glpat"), std::string::npos) << hint;
}

TEST(ProjectSwitches, SpeaksOnlyWhenTheLogShowsANetworkFailure) {
  EXPECT_EQ(network_failure_hint("error: nvcc failed\n", "X_FORCE_BUILD"), "");
  auto hint =
      network_failure_hint("urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>\n",
                           "os.getenv('DEMO_FORCE_BUILD')");
  EXPECT_NE(hint.find("offline by design"), std::string::npos) << hint;
  EXPECT_NE(hint.find("--env DEMO_FORCE_BUILD=TRUE"), std::string::npos) << hint;
  auto without = network_failure_hint("pip: ERROR: No matching distribution found for ninja", "");
  EXPECT_NE(without.find("--allow-network"), std::string::npos) << without;
}

TEST(ProjectSwitches, FindsTheSwitchesThatBuildCudaWithoutAGpu) {
  const std::string setup_py =
      "WITH_CUDA = torch.cuda.is_available() and CUDA_HOME is not None\n"
      "if os.getenv('FORCE_CUDA', '0') == '1': WITH_CUDA = True\n"
      "suffix = 'cuda' if WITH_CUDA else 'cpu'\n"
      "if os.environ.get('SPCONV_FORCE_CUDA'): pass\n"
      "if os.environ.get(\"DEMO_WITH_CUDA\"): pass\n"
      "NOT_FORCE_CUDA_HERE = 'FORCE_CUDA_NOT'\n"
      "define_macros += [('WITH_CUDA', None)]  # a C macro, not the environment\n";
  // WITH_CUDA is a Python variable there, not something the environment sets
  EXPECT_EQ(cuda_build_switches(setup_py),
            (std::vector<std::string>{"FORCE_CUDA", "SPCONV_FORCE_CUDA", "DEMO_WITH_CUDA"}));
  EXPECT_TRUE(cuda_build_switches("CAUSAL_CONV1D_FORCE_BUILD").empty());
}

TEST(ProjectSwitches, TheCpuOnlyHintNamesTheSwitchOrSaysWhereToLook) {
  auto named = cpu_only_build_hint("if os.getenv('FORCE_CUDA', '0') == '1':");
  EXPECT_NE(named.find("CPU-only variant"), std::string::npos) << named;
  EXPECT_NE(named.find("its setup.py reads FORCE_CUDA: build with --env FORCE_CUDA=1"), std::string::npos) << named;
  auto unknown = cpu_only_build_hint("");
  EXPECT_NE(unknown.find("find the switch in its setup.py"), std::string::npos) << unknown;
  EXPECT_EQ(unknown.find("its setup.py reads"), std::string::npos) << unknown;
}

TEST(ProjectSwitches, TheCpuOnlyHintNamesTheGatesOfTheExtensionOutermostFirst) {
  // FORCE_CUDA is read too, but only inside the branch TLA_BUILD_LEGACY_CUDA opens.
  const std::string setup_py = "FORCE_CUDA = os.getenv('FORCE_CUDA')\nif os.getenv('TLA_BUILD_LEGACY_CUDA') == '1':\n";
  ExtensionGates gates{true, 1, {{"TLA_BUILD_LEGACY_CUDA", "1", false}, {"FORCE_CUDA", "", false}}};
  auto hint = cpu_only_build_hint(setup_py, gates);
  EXPECT_NE(hint.find("only when TLA_BUILD_LEGACY_CUDA=1, then FORCE_CUDA is set"), std::string::npos) << hint;
  EXPECT_NE(hint.find("--env TLA_BUILD_LEGACY_CUDA=1 --env FORCE_CUDA=1"), std::string::npos) << hint;
  // A switch that turns CUDA off is named as one to leave unset, never proposed.
  auto off = cpu_only_build_hint("", ExtensionGates{true, 1, {{"BUILD_NO_CUDA", "", true}}});
  EXPECT_NE(off.find("only when BUILD_NO_CUDA is not set"), std::string::npos) << off;
  EXPECT_EQ(off.find("--env BUILD_NO_CUDA"), std::string::npos) << off;
  // No CUDA extension found: it says it cannot tell, then names what the text reads.
  auto unknown = cpu_only_build_hint(setup_py, ExtensionGates{true, 0, {}});
  EXPECT_NE(unknown.find("cannot tell from its setup.py"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("its setup.py reads FORCE_CUDA"), std::string::npos) << unknown;
}

TEST(ProjectSwitches, OnlyGatesThatTurnCudaOnAreSettable) {
  ExtensionGates nested{true, 1, {{"TLA_BUILD_LEGACY_CUDA", "1", false}, {"FORCE_CUDA", "", false}}};
  EXPECT_EQ(settable_cuda_switches(nested).set,
            (std::vector<EnvSwitch>{{"TLA_BUILD_LEGACY_CUDA", "1"}, {"FORCE_CUDA", "1"}}));  // outermost first
  EXPECT_EQ(settable_cuda_switches({true, 1, {{"WITH_CUDA", "ON", false}}}).set,
            (std::vector<EnvSwitch>{{"WITH_CUDA", "ON"}}));
  // one that must stay unset, or reads as turning CUDA off: never set, kept off
  EXPECT_EQ(settable_cuda_switches({true, 1, {{"FORCE_CUDA", "", false}, {"BUILD_NO_CUDA", "", true}}}),
            (CudaSwitches{{{"FORCE_CUDA", "1"}}, {"BUILD_NO_CUDA"}}));
  EXPECT_EQ(settable_cuda_switches({true, 1, {{"DEMO_CPU_ONLY", "0", false}}}), (CudaSwitches{{}, {"DEMO_CPU_ONLY"}}));
  EXPECT_EQ(settable_cuda_switches({true, 1, {{"DISABLE_CUDA_EXT", "1", false}}}).kept_off,
            (std::vector<std::string>{"DISABLE_CUDA_EXT"}));
  // what archbuild sets for every build holds already (xformers: `... or TORCH_CUDA_ARCH_LIST != ""`)
  EXPECT_EQ(settable_cuda_switches({true, 1, {{"FORCE_CUDA", "1", false}, {"TORCH_CUDA_ARCH_LIST", "", false}}}),
            (CudaSwitches{{{"FORCE_CUDA", "1"}}, {}}));
  // one that skips or names a place, a version or a tool is never set to "1"
  EXPECT_EQ(settable_cuda_switches({true, 1, {{"SKIP_CUDA_BUILD", "", false}}}),
            (CudaSwitches{{}, {"SKIP_CUDA_BUILD"}}));
  EXPECT_EQ(settable_cuda_switches(
                {true, 1, {{"CUDNN_ROOT", "", false}, {"CUDA_VERSION", "11.0", false}, {"NVCC", "", false}}}),
            CudaSwitches{});
  // a project's own arch variable asked only to be set is no on-switch ("1" is no arch list)
  EXPECT_EQ(settable_cuda_switches({true, 1, {{"NATTEN_CUDA_ARCH", "", false}}}), CudaSwitches{});
  // unread, or no CUDA extension seen: nothing is known
  EXPECT_EQ(settable_cuda_switches({false, 1, {{"FORCE_CUDA", "", false}}}), CudaSwitches{});
  EXPECT_EQ(settable_cuda_switches({true, 0, {}}), CudaSwitches{});
}
