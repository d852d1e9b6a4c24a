#include "validate/wheel_repair.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "validate/clean_room.h"

using namespace archbuild;

namespace {
WheelAudit audit_with(std::vector<LibraryNeed> needs) {
  WheelAudit audit;
  audit.ran = true;
  audit.files.push_back({"pkg/_C.so", std::move(needs)});
  return audit;
}
}  // namespace

TEST(WheelRepair, LeavesTorchCudaAndTheDriverToTheirOwnWheels) {
  const auto audit = audit_with({{"libc10.so", LibrarySource::torch, "/site/torch/lib/libc10.so"},
                                 {"libcudart.so.13", LibrarySource::cuda, "/usr/local/cuda/lib64/libcudart.so.13"},
                                 {"libcuda.so.1", LibrarySource::driver, "/usr/lib/libcuda.so.1"},
                                 {"libzstd.so.1", LibrarySource::machine, "/usr/lib/libzstd.so.1"},
                                 {"libc.so.6", LibrarySource::system, "/lib/libc.so.6"}});
  EXPECT_EQ(repair_exclusions(audit), (std::vector<std::string>{"libc10.so", "libcuda.so.1", "libcudart.so.13"}));
  const auto argv = repair_command("/py", audit, "/w/pkg-1.0-cp312-cp312-linux_x86_64.whl", "/out");
  EXPECT_EQ(argv,
            (std::vector<std::string>{"/py", "-m", "auditwheel", "repair", "--plat", "auto", "--disable-isa-ext-check",
                                      "--wheel-dir", "/out", "--exclude", "libc10.so", "--exclude", "libcuda.so.1",
                                      "--exclude", "libcudart.so.13", "/w/pkg-1.0-cp312-cp312-linux_x86_64.whl"}));
}

TEST(WheelRepair, LeavesTheFamiliesOutAtEveryDepth) {
  auto audit = audit_with({{"libzstd.so.1", LibrarySource::machine, "/usr/lib/libzstd.so.1"}});
  audit.exclude_patterns = {"libcuda.so*", "*/torch/lib/*"};
  // a bundled library's own need of the driver is matched by the pattern, not by a name the wheel links
  EXPECT_EQ(repair_exclusions(audit), (std::vector<std::string>{"libcuda.so*", "*/torch/lib/*"}));
}

TEST(WheelRepair, AWheelWithoutElfFilesStaysAsItIs) {
  WheelAudit audit;
  audit.ran = true;  // audited: no ELF file in it
  const auto repair = repair_wheel("/nonexistent/python", AuditTool{"/tools", ""}, audit, "/w/a-1.0-py3-none-any.whl",
                                   "/out");
  EXPECT_TRUE(repair.ok());
  EXPECT_EQ(repair.wheel, "/w/a-1.0-py3-none-any.whl");
  EXPECT_EQ(repair.summary(), "nothing to repair: the wheel holds no ELF file");
}

TEST(WheelRepair, RefusesWhatItCannotBundleBeforeRunningAnything) {
  AuditTool tool{"/tools/auditwheel-6.8.2", ""};
  const auto missing = repair_wheel("/nonexistent/python", tool,
                                    audit_with({{"libopenblas.so.0", LibrarySource::missing, ""}}), "/w/a.whl", "/out");
  EXPECT_FALSE(missing.ok());
  EXPECT_EQ(missing.summary(),
            "not repaired: libopenblas.so.0 is found nowhere on this machine: there is nothing "
            "to bundle");
  const auto unaudited = repair_wheel("/nonexistent/python", tool, WheelAudit{}, "/w/a.whl", "/out");
  EXPECT_EQ(unaudited.error.rfind("the wheel was not audited", 0), 0u);
  const auto no_tool = repair_wheel("/nonexistent/python", AuditTool{{}, "offline: pip install ..."}, audit_with({}),
                                    "/w/a.whl", "/out");
  EXPECT_EQ(no_tool.error, "offline: pip install ...");
}

TEST(WheelRepair, SaysWhatItBundledAndTheTag) {
  WheelRepair repair;
  repair.bundled = {"libzstd.so.1", "libgomp.so.1"};
  repair.platform_tag = "manylinux_2_34_x86_64";
  EXPECT_EQ(repair.summary(), "bundled libzstd.so.1, libgomp.so.1; tagged manylinux_2_34_x86_64");
  repair.bundled.clear();
  EXPECT_EQ(repair.summary(), "nothing to bundle; tagged manylinux_2_34_x86_64");
  EXPECT_EQ(repair.to_json()["repaired"], true);
}

TEST(CleanRoom, BubblewrapSeesOnlyTheLayoutWithTmpBeforeTheBinds) {
  const auto layout = CleanRoomLayout::from_json(R"({"python": "/w/venv/bin/python", "lib_dir": "/run/node/lib",
    "binds": [["/tmp/w/venv", "/tmp/w/venv"], ["/usr/lib/libc.so.6", "/run/node/lib/libc.so.6"]],
    "devices": ["/dev/nvidia0"], "missing_system": ["libGL.so.1"]})");
  EXPECT_EQ(layout.missing_system, std::vector<std::string>{"libGL.so.1"});
  const auto argv = bubblewrap_argv("/usr/bin/bwrap", layout, {{"PYTHONNOUSERSITE", "1"}},
                                    {"/w/venv/bin/python", "-c", "1"});
  const auto at = [&](const std::string& word) { return std::find(argv.begin(), argv.end(), word) - argv.begin(); };
  EXPECT_EQ(argv.front(), "/usr/bin/bwrap");
  EXPECT_LT(at("--unshare-all"), at("/w/venv/bin/python"));
  EXPECT_LT(at("--clearenv"), at("LD_LIBRARY_PATH"));
  EXPECT_EQ(argv[at("LD_LIBRARY_PATH") + 1], "/run/node/lib");
  // a work dir below /tmp shows through the tmpfs: the tmpfs comes first
  EXPECT_LT(at("/tmp"), at("/tmp/w/venv"));
  EXPECT_EQ(argv[at("/tmp/w/venv") - 1], "--ro-bind");
  EXPECT_EQ(argv[at("/dev/nvidia0") - 1], "--dev-bind");
  EXPECT_EQ((std::vector<std::string>(argv.end() - 3, argv.end())),
            (std::vector<std::string>{"/w/venv/bin/python", "-c", "1"}));
  EXPECT_THROW(CleanRoomLayout::from_json(R"({"python": "/p", "lib_dir": "/l", "binds": [["/only-one"]]})"), UserError);
  EXPECT_THROW(CleanRoomLayout::from_json("not json"), UserError);
}

TEST(CleanRoom, SkipsWithTheReasonWhenTheWheelWasNotAudited) {
  CleanRoomRequest request;
  request.wheel = "/w/pkg-1.0-py3-none-linux_x86_64.whl";
  const auto room = run_clean_room(request);
  EXPECT_FALSE(room.ran);
  EXPECT_FALSE(room.ok());
  EXPECT_NE(room.summary().find("skipped: "), std::string::npos);
}
