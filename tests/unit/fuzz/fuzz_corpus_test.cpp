// Every input of tests/fuzz/corpus/<target>/ (the seeds, and the inputs a
// fuzzer found a problem with) through the entry point its fuzz target
// drives: the corpora are regression tests in every build, without clang or
// sanitizers. An input may be refused (UserError, caught by the entry point);
// any other exception fails here, as it is a crash under the fuzzer.
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fuzz_binaries.h"
#include "fuzz_index_page.h"
#include "fuzz_store_entry.h"
#include "fuzz_toml.h"
#include "source/pep440_version.h"
#include "test_support.h"

using namespace archbuild;

namespace {

struct CorpusInput {
  std::string name;
  std::vector<uint8_t> bytes;
};

std::vector<CorpusInput> corpus(const std::string& target) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(ARCHBUILD_SOURCE_DIR "/tests/fuzz/corpus/" + target))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::vector<CorpusInput> inputs;
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    inputs.push_back({file.filename().string(), {std::istreambuf_iterator<char>(in), {}}});
  }
  return inputs;
}

// The config loader reads $ARCHBUILD_CONFIG, which the entry point points at its file.
struct RestoredConfigVariable {
  std::optional<std::string> saved;
  RestoredConfigVariable() {
    if (const char* value = std::getenv("ARCHBUILD_CONFIG")) saved = value;
  }
  ~RestoredConfigVariable() {
    if (saved)
      ::setenv("ARCHBUILD_CONFIG", saved->c_str(), 1);
    else
      ::unsetenv("ARCHBUILD_CONFIG");
  }
};

}  // namespace

TEST(FuzzCorpus, InspectInputs) {
  auto inputs = corpus("inspect");
  EXPECT_GE(inputs.size(), 6u);
  for (const auto& input : inputs) EXPECT_NO_THROW(fuzz::inspect_binary(input.bytes)) << input.name;
}

TEST(FuzzCorpus, VersionInputs) {
  // fuzz_version's seeds are real versions; the checker takes each in one pass
  auto inputs = corpus("version");
  EXPECT_GE(inputs.size(), 9u);
  for (const auto& input : inputs)
    EXPECT_TRUE(is_pep440_version(std::string(input.bytes.begin(), input.bytes.end()))) << input.name;
}

TEST(FuzzCorpus, WheelInputs) {
  TempDir scratch("archbuild-fuzz-wheel");
  auto inputs = corpus("wheel");
  for (const auto& input : inputs) {
    bool accepted = false;
    EXPECT_NO_THROW(accepted = fuzz::read_wheel(input.bytes, scratch.path)) << input.name;
    // the seeds are sound wheels: the harness reaches RECORD and the members
    if (input.name.ends_with(".whl")) {
      EXPECT_TRUE(accepted) << input.name;
    }
  }
  EXPECT_GE(inputs.size(), 4u);
}

TEST(FuzzCorpus, IndexPageInputs) {
  TempDir scratch("archbuild-fuzz-index");
  for (const auto& input : corpus("index_page")) {
    std::set<std::string> linked;
    EXPECT_NO_THROW(linked = fuzz::read_index_page(input.bytes, scratch.path)) << input.name;
    // the seed page archbuild wrote is read as its own, both links found
    if (input.name == "fixture_two_wheels.html") {
      EXPECT_EQ(linked, (std::set<std::string>{"fixture-1.0+cu130.sm80-py3-none-linux_x86_64.whl",
                                               "fixture-1.0+cu130.sm90ptx-py3-none-linux_x86_64.whl"}));
    }
  }
}

TEST(FuzzCorpus, StoreEntryInputs) {
  TempDir scratch;
  size_t inputs = 0;
  for (const auto& input : corpus("store_entry")) {
    size_t problems = 0;
    EXPECT_NO_THROW(problems = fuzz::read_store_entry(input.bytes, scratch.path)) << input.name;
    EXPECT_GT(problems, 0u) << input.name;  // every seed is a damaged entry, and verify says so
    ++inputs;
  }
  EXPECT_GE(inputs, 7u);
}

TEST(FuzzCorpus, TomlInputs) {
  RestoredConfigVariable restored;
  TempDir scratch("archbuild-fuzz-toml");
  for (const auto& input : corpus("toml")) {
    fuzz::TomlLoads loads;
    EXPECT_NO_THROW(loads = fuzz::load_toml_files(input.bytes, scratch.path)) << input.name;
    // the seeds, recipes/*.toml and a config file, load whole
    if (input.name.starts_with("regression-whitespace-table")) {
      // where toml++ 3.3.0 reaches undefined behaviour: refused before it parses
      EXPECT_FALSE(loads.recipe || loads.config) << input.name;
    } else if (input.name == "config.toml") {
      EXPECT_TRUE(loads.config);
    } else if (std::filesystem::exists(std::filesystem::path(ARCHBUILD_SOURCE_DIR "/recipes") / input.name)) {
      EXPECT_TRUE(loads.recipe) << input.name;
    }
  }
}
