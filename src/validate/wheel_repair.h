#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "validate/audit_tool.h"
#include "validate/wheel_audit.h"

namespace archbuild {

// `auditwheel repair` on a built wheel, for the portable setting: each
// library the audit found only on this machine is copied into the wheel
// under a unique name with the RPATHs pointing at it; torch's, CUDA's and the
// driver's are left to their own wheels (`--exclude`, as PyTorch's release
// scripts do); the platform tag becomes the manylinux tag the wheel's symbol
// versions allow.
struct WheelRepair {
  std::filesystem::path wheel;        // the repaired wheel
  std::vector<std::string> bundled;   // sonames copied in
  std::vector<std::string> excluded;  // sonames left to torch, CUDA and the driver
  std::string platform_tag;           // "manylinux_2_34_x86_64"
  std::string error;                  // why it was not repaired ("" when it was)
  bool environment = false;           // ... for this machine's reasons (no auditwheel), not the wheel's
  bool ok() const { return error.empty(); }
  // "bundled libzstd.so.1; tagged manylinux_2_34_x86_64", "nothing to bundle; ...", "not repaired: ..."
  std::string summary() const;
  nlohmann::json to_json() const;
};

// The needs repair leaves out: those the audit sorted as torch's, CUDA's or the driver's.
std::vector<std::string> repair_exclusions(const WheelAudit& audit);

// The command, for -v and the tests: python -m auditwheel repair ... -w OUT WHEEL.
std::vector<std::string> repair_command(const std::string& python, const WheelAudit& audit,
                                        const std::filesystem::path& wheel, const std::filesystem::path& out_dir);

// Repairs `wheel` (audited as `audit`) into `out_dir`, emptied first. Never
// throws: a repair that cannot be made says why (the tool unavailable, a need
// found nowhere, symbols too new for any manylinux policy).
WheelRepair repair_wheel(const std::string& python, const AuditTool& tool, const WheelAudit& audit,
                         const std::filesystem::path& wheel, const std::filesystem::path& out_dir);

}  // namespace archbuild
