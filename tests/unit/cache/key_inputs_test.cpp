#include "cache/key_inputs.h"

#include <gtest/gtest.h>

#include "cache/cache_key.h"

using namespace archbuild;

namespace {
KeyFields fields() {
  KeyFields key;
  key.recipe = "torchvision";
  key.recipe_sha256 = "r";
  key.ref = "v0.29.0";
  key.arch_list = "9.0";
  key.arch_dialect = "extension";
  key.cuda = "13.0.88";
  key.host_compiler = "gcc 12.2.0";
  key.python_tag = "cp311";
  key.build_system = "setup.py";
  key.build_command = "{python} setup.py bdist_wheel";
  key.build_env = {{"FORCE_CUDA", "1"}};
  key.extra_env = {{"TOKEN", "secret"}};
  key.source = KeySource{std::string(40, 'c'),
                         std::nullopt,
                         {{"third_party/cutlass", std::string(40, 'd')}},
                         {{"fix.patch", "e"}}};
  key.dependencies = {{"torch", "torch-2.14.0+cu130.sm90-cp311-cp311-linux_x86_64.whl sha256 f"}};
  key.build_requirements = {{"cmake", "3.31.2"}};
  return key;
}
}  // namespace

TEST(KeyInputs, SpellsEveryFieldOnceAndReadsItBack) {
  const auto key = KeyInputs::of(fields());
  const auto& values = key.values();
  EXPECT_EQ(values.at("recipe"), "torchvision");
  EXPECT_EQ(values.at("arch_enforcement"), "on");
  EXPECT_EQ(values.at("build.env.FORCE_CUDA"), "1");
  EXPECT_EQ(values.at("env.TOKEN"), "secret");
  EXPECT_EQ(values.at("source.commit"), std::string(40, 'c'));
  EXPECT_EQ(values.at("source.submodule.third_party/cutlass"), std::string(40, 'd'));
  EXPECT_EQ(values.at("source.patch.fix.patch"), "e");
  EXPECT_EQ(values.count("source.sdist.sha256"), 0u);
  EXPECT_EQ(values.at("dep.torch").substr(0, 6), "torch-");
  EXPECT_EQ(values.at("build.requires.cmake"), "3.31.2");

  // read back through key.txt, as the store and provenance do
  const auto parsed = KeyInputs::parse(CacheKey::compute(values).text);
  EXPECT_EQ(parsed.recipe(), "torchvision");
  EXPECT_EQ(parsed.cuda(), "13.0.88");
  EXPECT_EQ(parsed.source_commit(), std::string(40, 'c'));
  EXPECT_EQ(parsed.submodules(), (std::map<std::string, std::string>{{"third_party/cutlass", std::string(40, 'd')}}));
  EXPECT_EQ(parsed.patches(), (std::map<std::string, std::string>{{"fix.patch", "e"}}));
  EXPECT_EQ(parsed.dependencies().size(), 1u);
  EXPECT_EQ(parsed.build_requirements().at("cmake"), "3.31.2");
  EXPECT_FALSE(parsed.sdist_sha256());
}

TEST(KeyInputs, AHostOtherThanX86NamesItsMachineAndX86KeysStayAsTheyWere) {
  auto x86 = fields();
  EXPECT_EQ(KeyInputs::of(x86).values().count("host_machine"), 0u);
  auto arm = fields();
  arm.host_machine = "aarch64";
  EXPECT_EQ(KeyInputs::of(arm).values().at("host_machine"), "aarch64");
  EXPECT_NE(CacheKey::compute(KeyInputs::of(x86).values()).hash, CacheKey::compute(KeyInputs::of(arm).values()).hash);
}

TEST(KeyInputs, PrefixedNamesDoNotLeakIntoEachOther) {
  // "env." must not match "build.env." and "source.patch." not "source.patches"
  KeyInputs key({{"build.env.A", "1"}, {"env.B", "2"}, {"source.patches", "x"}, {"source.patch.p", "y"}});
  EXPECT_EQ(key.extra_env(), (std::map<std::string, std::string>{{"B", "2"}}));
  EXPECT_EQ(key.patches(), (std::map<std::string, std::string>{{"p", "y"}}));
}

TEST(KeyInputs, SecretsLeaveOnlyAsDigests) {
  const auto hashed = KeyInputs::of(fields()).with_secrets_hashed();
  EXPECT_EQ(hashed.extra_env().at("TOKEN").substr(0, 7), "sha256:");
  EXPECT_EQ(hashed.extra_env().at("TOKEN").find("secret"), std::string::npos);
  EXPECT_EQ(hashed.get("build.env.FORCE_CUDA"), "1");  // the recipe's environment is no secret
}

TEST(KeyInputs, CompileInputsIgnoreTheSourceAndTheInstalledTools) {
  auto one = fields();
  auto other = fields();
  other.source->commit = std::string(40, '9');
  other.build_requirements = {{"cmake", "4.0.0"}};
  EXPECT_EQ(KeyInputs::of(one).compile_inputs_digest(), KeyInputs::of(other).compile_inputs_digest());
  other.arch_list = "8.0;9.0";
  EXPECT_NE(KeyInputs::of(one).compile_inputs_digest(), KeyInputs::of(other).compile_inputs_digest());
  // known before a checkout: the same with no source at all
  auto planned = fields();
  planned.source.reset();
  planned.build_requirements.clear();
  EXPECT_EQ(KeyInputs::of(planned).compile_inputs_digest(), KeyInputs::of(one).compile_inputs_digest());
}
