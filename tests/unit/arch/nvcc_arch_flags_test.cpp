#include "arch/nvcc_arch_flags.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/strings.h"

using namespace archbuild;

namespace {

std::vector<NvccTarget> targets(const std::string& text) { return parse_nvcc_targets(text).value(); }

std::vector<std::string> words(const std::string& text) { return split_any(text, " "); }

struct Case {
  const char* what;
  const char* command;  // nvcc's arguments
  const char* asked;
  NvccRewrite::Kind kind;
  const char* after;  // the targets the command ends up with ("" when untouched or left)
};

}  // namespace

TEST(NvccTarget, NamesRoundTrip) {
  for (const char* name : {"sm_80", "sm_90a", "compute_90", "sm_100f", "compute_120a", "sm_121"})
    EXPECT_EQ(NvccTarget::parse(name).value().name(), name);
  for (const char* bad : {"sm_", "sm_9", "lto_90", "compute_90x", "90"}) EXPECT_FALSE(NvccTarget::parse(bad)) << bad;
  EXPECT_EQ(format_nvcc_targets(targets("compute_90;sm_90;sm_80")), "sm_80;sm_90;compute_90");
}

TEST(NvccRewrite, TheRuleTable) {
  using Kind = NvccRewrite::Kind;
  const Case cases[] = {
      {"a hardcoded list is cut to the asked arch",
       "-c a.cu -o a.o -gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80 "
       "-gencode=arch=compute_90,code=sm_90 -gencode=arch=compute_120,code=[sm_120,compute_120]",
       "sm_90", Kind::rewritten, "sm_90"},
      {"-arch=sm_XX means SASS and PTX of XX; the asked list replaces it", "-c a.cu -arch=sm_80", "sm_90",
       Kind::rewritten, "sm_90"},
      {"--gpu-architecture with a separate value", "-c a.cu --gpu-architecture sm_80 -o a.o", "sm_90;compute_90",
       Kind::rewritten, "sm_90;compute_90"},
      {"-arch=compute_XX with -code lists the images", "-c a.cu -arch=compute_80 -code=sm_80,sm_86", "sm_86",
       Kind::rewritten, "sm_86"},
      {"native and all are whatever nvcc picks: replaced", "-c a.cu -arch=native", "sm_90", Kind::rewritten, "sm_90"},
      {"all-major", "-c a.cu -arch all-major", "sm_80;sm_90", Kind::rewritten, "sm_80;sm_90"},
      {"a compile with no target flag gets the asked list (nvcc's default is not it)", "-c a.cu -o a.o", "sm_90",
       Kind::rewritten, "sm_90"},
      {"exactly what is asked: not touched", "-c a.cu -gencode arch=compute_90,code=[sm_90,compute_90]",
       "sm_90;compute_90", Kind::untouched, ""},
      {"a correct list with a unit's own sm_90a beside it: not touched",
       "-c a.cu -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 "
       "-gencode arch=compute_90a,code=sm_90a",
       "sm_80;sm_90", Kind::untouched, ""},
      {"a generic list keeps the project's a-variant of an asked CC",
       "-c a.cu -gencode arch=compute_75,code=sm_75 -gencode arch=compute_90a,code=sm_90a", "sm_90", Kind::rewritten,
       "sm_90;sm_90a"},
      {"a generic list drops a-variants of CCs not asked",
       "-c a.cu -gencode arch=compute_80,code=sm_80 -gencode arch=compute_100a,code=sm_100a", "sm_90", Kind::rewritten,
       "sm_90"},
      {"a unit only for sm_90a keeps it and gets nothing added",
       "-c hopper.cu -gencode arch=compute_90a,code=sm_90a -gencode arch=compute_100a,code=sm_100a", "sm_80;sm_90",
       Kind::rewritten, "sm_90a"},
      {"a unit only for sm_100a, 9.0 asked: left as written and reported",
       "-c blackwell.cu -gencode arch=compute_100a,code=sm_100a", "sm_90", Kind::left_as_written, ""},
      {"PTX the project adds but nobody asked for is dropped",
       "-c a.cu -gencode arch=compute_90,code=[sm_90,compute_90]", "sm_90", Kind::rewritten, "sm_90"},
      {"nothing compiled: --version", "--version", "sm_90", Kind::untouched, ""},
      {"nothing compiled: dependency scan", "-M a.cu -o a.d", "sm_90", Kind::untouched, ""},
      {"a device link gets the asked list", "-dlink a.o b.o -o link.o", "sm_90", Kind::rewritten, "sm_90"},
      {"-ptx makes one image: left", "-ptx -arch=compute_80 k.cu -o k.ptx", "sm_80;sm_90;compute_90",
       Kind::left_as_written, ""},
      {"-cubin makes one image: left", "-cubin -arch=sm_80 k.cu -o k.cubin", "sm_90", Kind::left_as_written, ""},
      {"a flag without its value cannot be read: left", "-c a.cu -gencode", "sm_90", Kind::left_as_written, ""},
      {"an image kind archbuild does not know: left", "-c a.cu -gencode arch=compute_90,code=lto_90", "sm_90",
       Kind::left_as_written, ""},
  };
  for (const auto& test : cases) {
    SCOPED_TRACE(test.what);
    auto rewrite = enforce_nvcc_targets(words(test.command), targets(test.asked));
    EXPECT_EQ(rewrite.kind, test.kind);
    if (test.kind == Kind::rewritten) {
      EXPECT_EQ(format_nvcc_targets(rewrite.after), test.after);
      // the new command line names exactly those images, once each
      auto again = enforce_nvcc_targets(rewrite.args, targets(test.asked));
      EXPECT_EQ(again.kind, Kind::untouched) << join(rewrite.args, " ");
      EXPECT_EQ(format_nvcc_targets(again.before), test.after);
    } else {
      EXPECT_EQ(rewrite.args, words(test.command));  // byte for byte what the project wrote
    }
  }
}

TEST(NvccRewrite, KeepsEveryOtherArgumentInOrder) {
  auto rewrite = enforce_nvcc_targets(
      words("-c a.cu -o a.o -O3 -arch=sm_80 --use_fast_math -Xptxas -v -gencode arch=compute_86,code=sm_86 -DX=1"),
      targets("sm_90"));
  ASSERT_EQ(rewrite.kind, NvccRewrite::Kind::rewritten);
  EXPECT_EQ(join(rewrite.args, " "),
            "-c a.cu -o a.o -O3 --use_fast_math -Xptxas -v -DX=1 -gencode=arch=compute_90,code=sm_90");
  EXPECT_EQ(format_nvcc_targets(rewrite.before), "sm_80;compute_80;sm_86");  // by CC
}

TEST(NvccRewrite, VariantGencodeNamesItsVirtualArch) {
  auto rewrite = enforce_nvcc_targets(words("-c a.cu"), targets("sm_90a;compute_90"));
  EXPECT_EQ(join(rewrite.args, " "),
            "-c a.cu -gencode=arch=compute_90,code=compute_90 -gencode=arch=compute_90a,code=sm_90a");
}

TEST(NvccRewrite, EnvironmentFlagsSplitIntoTargetsAndTheRest) {
  auto split = split_target_flags("--threads 4 -gencode arch=compute_80,code=sm_80 -arch=sm_75 -lineinfo");
  EXPECT_EQ(split.rest, "--threads 4 -lineinfo");
  EXPECT_EQ(split.target_flags, (std::vector<std::string>{"-gencode", "arch=compute_80,code=sm_80", "-arch=sm_75"}));
}
