#include "builder/network_hint.h"

#include <gtest/gtest.h>

using namespace archbuild;

TEST(NetworkHint, FindsTheProjectsForceBuildSwitches) {
  const std::string setup_py =
      "FORCE_BUILD = os.getenv(\"CAUSAL_CONV1D_FORCE_BUILD\", \"FALSE\") == \"TRUE\"\n"
      "SKIP = os.getenv('CAUSAL_CONV1D_SKIP_CUDA_BUILD')\n"
      "if os.getenv('FORCE_CUDA', '0') == '1': pass\n"
      "NOT_A_FORCE_CUDA_SWITCH = 1\n"
      "again = os.environ['CAUSAL_CONV1D_FORCE_BUILD']\n"
      "_FORCE_BUILD = 2  # no name before the suffix\n";
  EXPECT_EQ(force_build_switches(setup_py), (std::vector<std::string>{"CAUSAL_CONV1D_FORCE_BUILD", "FORCE_CUDA"}));
  EXPECT_TRUE(force_build_switches("").empty());
}

TEST(NetworkHint, SpeaksOnlyWhenTheLogShowsANetworkFailure) {
  EXPECT_EQ(network_failure_hint("error: nvcc failed\n", "X_FORCE_BUILD"), "");
  auto hint =
      network_failure_hint("urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>\n",
                           "os.getenv('DEMO_FORCE_BUILD')");
  EXPECT_NE(hint.find("offline by design"), std::string::npos) << hint;
  EXPECT_NE(hint.find("--env DEMO_FORCE_BUILD=TRUE"), std::string::npos) << hint;
  auto without = network_failure_hint("pip: ERROR: No matching distribution found for ninja", "");
  EXPECT_NE(without.find("--allow-network"), std::string::npos) << without;
}
