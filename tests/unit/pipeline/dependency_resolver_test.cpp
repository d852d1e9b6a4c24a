#include "pipeline/dependency_resolver.h"

#include <gtest/gtest.h>

#include "arch/arch_spec.h"
#include "builder/dependency_env.h"
#include "cache/cache_index.h"
#include "cache/wheel_store.h"
#include "core/cache_layout.h"
#include "core/sha256.h"
#include "core/system_info.h"
#include "test_support.h"
#include "wheel/build_record.h"
#include "wheel/wheel_relabel.h"
#include "wheel/wheel_test_support.h"

namespace archbuild {
namespace {

// A cache whose index lists real wheels of the recipe "scatter", each with
// its build record, published one after another (each takes the name over).
class CachedDependency : public ::testing::Test {
 protected:
  // Publishes a scatter wheel built against `torch` ("" for none) and refreshes the index.
  std::filesystem::path publish(const std::string& ref, const std::string& torch) {
    const auto dir = dir_.path / ref;
    std::filesystem::create_directories(dir);
    std::string key_text = "cache_format 1\nref " + ref + "\n";
    std::map<std::string, std::string> key_inputs = {{"ref", ref}};
    if (!torch.empty()) key_inputs["dep.torch"] = torch;
    if (host_machine() != "x86_64") key_inputs["host_machine"] = host_machine();
    BuildRecord record{"scatter", "1.0+cu130.sm90",     "9.0",     parse_arch_list("9.0"),
                       kCuda,     sha256_hex(key_text), key_inputs};
    auto wheel = relabel_wheel(write_minimal_wheel(dir, "scatter", "py3-none-linux_x86_64"), "cu130.sm90",
                               {{BuildRecord::kFileName, record.to_json().dump()}})
                     .path;
    WheelStore store(cache_);
    auto entry = store.publish({key_text, record.key}, {wheel}, "{}");
    refresh_cache_index(cache_, store);
    return entry.wheels.front();
  }

  std::optional<std::filesystem::path> lookup(const std::string& installed_torch) {
    Recipe recipe;
    recipe.name = "scatter";
    return cached_dependency(CacheLayout(cache_), recipe, parse_arch_list("9.0"), kCuda, "", installed_torch);
  }

  static constexpr const char* kCuda = "13.0.88";
  TempDir dir_;
  std::filesystem::path cache_ = dir_.path / "cache";
};

// A C++ extension follows its torch's ABI: a dependency wheel is taken only
// when it was built against the very torch this build uses.
TEST_F(CachedDependency, IsTakenOnlyWhenBuiltAgainstTheSameTorch) {
  const auto interpreter_a = installed_line("2.11.0+cu130", "/venv/a/bin/python");
  const auto interpreter_b = installed_line("2.11.0+cu130", "/venv/b/bin/python");
  const auto against_a = publish("v1", interpreter_a);
  EXPECT_EQ(lookup(interpreter_a), against_a);
  EXPECT_EQ(lookup(interpreter_b), std::nullopt);  // another interpreter's torch
  EXPECT_EQ(lookup(""), std::nullopt);             // a build against the cache's torch takes no interpreter's

  const auto against_cache = publish("v2", "2.9.1+cu130.sm90");
  EXPECT_EQ(lookup(""), against_cache);
  EXPECT_EQ(lookup(interpreter_a), std::nullopt);  // the newest is the cache torch's; the other is shadowed

  const auto without_torch = publish("v3", "");  // a dependency that does not build against torch
  EXPECT_EQ(lookup(interpreter_a), without_torch);
  EXPECT_EQ(lookup(""), without_torch);
}

}  // namespace
}  // namespace archbuild
