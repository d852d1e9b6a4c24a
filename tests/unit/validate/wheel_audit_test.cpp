#include "validate/wheel_audit.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "validate/wheel_validation.h"

using namespace archbuild;

namespace {
// What recipes/frontends/wheel_audit.py prints for an extension that needs
// torch, the CUDA runtime, the system and two libraries only the builder has.
const char* kFrontendAnswer = R"({
  "auditwheel": "6.8.2", "platform_tag": "linux_x86_64", "symbol_tag": "manylinux_2_28_x86_64",
  "policy": "manylinux_2_28_x86_64",
  "files": [
    {"file": "pkg/_C.cpython-312-x86_64-linux-gnu.so", "needs": [
      {"soname": "libc10.so", "from": "torch", "path": ""},
      {"soname": "libcudart.so.13", "from": "cuda", "path": "/usr/local/cuda/lib64/libcudart.so.13"},
      {"soname": "libgomp.so.1", "from": "machine", "path": "/usr/lib/x86_64-linux-gnu/libgomp.so.1.0.0"},
      {"soname": "libhelper.so", "from": "wheel", "path": ""},
      {"soname": "libc.so.6", "from": "system", "path": "/lib/x86_64-linux-gnu/libc.so.6"}]},
    {"file": "pkg/libhelper.so", "needs": [
      {"soname": "libgomp.so.1", "from": "machine", "path": "/usr/lib/x86_64-linux-gnu/libgomp.so.1.0.0"},
      {"soname": "libopenblas.so.0", "from": "missing", "path": ""}]}]})";
}  // namespace

TEST(WheelAudit, NamesEachLibraryOnlyThisMachineHasOnceWithWhereItWasFound) {
  const auto audit = WheelAudit::from_frontend_json(kFrontendAnswer);
  ASSERT_TRUE(audit.ran);
  EXPECT_FALSE(audit.portable());
  const auto needs = audit.not_portable();
  ASSERT_EQ(needs.size(), 2u);  // libgomp once, though two files need it
  EXPECT_EQ(needs[0].soname, "libgomp.so.1");
  EXPECT_EQ(needs[0].from, LibrarySource::machine);
  EXPECT_EQ(needs[1].soname, "libopenblas.so.0");
  EXPECT_EQ(audit.summary(),
            "not portable: libgomp.so.1 (/usr/lib/x86_64-linux-gnu/libgomp.so.1.0.0), libopenblas.so.0 (found "
            "nowhere here) are met only on this machine: a node without them cannot load the wheel (its symbols "
            "allow manylinux_2_28_x86_64)");
  const auto json = audit.to_json();
  EXPECT_EQ(json["platform_tag"], "linux_x86_64");
  EXPECT_EQ(json["not_portable"].size(), 2u);
  EXPECT_EQ(json["files"][0]["needs"][0]["from"], "torch");
}

TEST(WheelAudit, TorchCudaAndTheSystemAloneArePortable) {
  const auto audit = WheelAudit::from_frontend_json(R"({"auditwheel": "6.8.2",
      "platform_tag": "manylinux_2_28_x86_64", "symbol_tag": "manylinux_2_28_x86_64",
      "files": [{"file": "m.so", "needs": [{"soname": "libtorch_cuda.so", "from": "torch", "path": ""},
                                          {"soname": "libcuda.so.1", "from": "driver", "path": ""}]}]})");
  EXPECT_TRUE(audit.portable());
  EXPECT_EQ(audit.summary().rfind("portable as manylinux_2_28_x86_64 (", 0), 0u) << audit.summary();
  EXPECT_TRUE(audit.to_json()["not_portable"].empty());
}

TEST(WheelAudit, AnAnswerArchbuildCannotReadIsAnErrorNamingWhatIsWrong) {
  for (const auto& [text, expected] : std::vector<std::pair<std::string, std::string>>{
           {"Traceback (most recent call last)", "printed no JSON"},
           {R"({"auditwheel": "6.8.2"})", "no list of files"},
           {R"({"files": [{"file": "m.so", "needs": [{"soname": "libx.so", "from": "elsewhere"}]}]})",
            "sorted libx.so as 'elsewhere'"}}) {
    try {
      (void)WheelAudit::from_frontend_json(text);
      ADD_FAILURE() << "read: " << text;
    } catch (const UserError& error) {
      EXPECT_NE(std::string(error.what()).find(expected), std::string::npos) << error.what();
    }
  }
  WheelAudit skipped;
  skipped.skipped_reason = "auditwheel is not installed in /c/tools/auditwheel-6.8.2 and --offline installs nothing";
  EXPECT_FALSE(skipped.portable());
  EXPECT_EQ(skipped.summary(), "not audited: " + skipped.skipped_reason);
  EXPECT_EQ(skipped.to_json()["ran"], false);
}

TEST(WheelAudit, AFileLinkingTorchWithoutTheSharedCxxRuntimeCarriesItsOwn) {
  const auto audit = WheelAudit::from_frontend_json(R"({"auditwheel": "6.8.2",
      "platform_tag": "manylinux_2_28_x86_64", "symbol_tag": "manylinux_2_28_x86_64",
      "files": [{"file": "pkg/own.so", "needs": [{"soname": "libc10.so", "from": "torch", "path": ""},
                                                 {"soname": "libgcc_s.so.1", "from": "system", "path": "/lib/libgcc_s.so.1"}]},
                {"file": "pkg/shared.so", "needs": [{"soname": "libc10.so", "from": "torch", "path": ""},
                                                    {"soname": "libstdc++.so.6", "from": "system", "path": "/lib/libstdc++.so.6"}]},
                {"file": "pkg/plain_c.so", "needs": [{"soname": "libc.so.6", "from": "system", "path": "/lib/libc.so.6"}]},
                {"file": "pkg/openmp_c.so", "needs": [{"soname": "libgomp.so.1", "from": "torch", "path": ""}]}]})");
  EXPECT_TRUE(audit.portable());  // a node loads it; it is wrong all the same
  EXPECT_EQ(audit.own_cxx_runtime(), std::vector<std::string>{"pkg/own.so"});
  EXPECT_EQ(audit.to_json()["own_cxx_runtime"], nlohmann::json::array({"pkg/own.so"}));
  WheelValidation validation;
  validation.audit = audit;
  EXPECT_FALSE(validation.cxx_runtime_ok());
}
