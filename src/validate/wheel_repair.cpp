#include "validate/wheel_repair.h"

#include <algorithm>
#include <cstdlib>
#include <set>

#include "core/error.h"
#include "core/secrets.h"
#include "core/strings.h"
#include "process/run_process.h"
#include "wheel/wheel_archive.h"

namespace archbuild {

std::string WheelRepair::summary() const {
  if (!ok()) return "not repaired: " + error;
  return (bundled.empty() ? std::string("nothing to bundle") : "bundled " + join(bundled, ", ")) + "; tagged " +
         platform_tag;
}

nlohmann::json WheelRepair::to_json() const {
  return {{"repaired", ok()},     {"wheel", wheel.filename().string()}, {"bundled", bundled},
          {"excluded", excluded}, {"platform_tag", platform_tag},       {"error", error},
          {"summary", summary()}};
}

std::vector<std::string> repair_exclusions(const WheelAudit& audit) {
  std::set<std::string> sonames;
  for (const auto& file : audit.files)
    for (const auto& need : file.needs)
      if (need.from == LibrarySource::torch || need.from == LibrarySource::cuda || need.from == LibrarySource::driver)
        sonames.insert(need.soname);
  return {sonames.begin(), sonames.end()};
}

std::vector<std::string> repair_command(const std::string& python, const WheelAudit& audit,
                                        const std::filesystem::path& wheel, const std::filesystem::path& out_dir) {
  // --plat auto: the most compatible manylinux tag the symbols allow. The ISA
  // check is off as in the audit: CUDA host code is built for the baseline.
  std::vector<std::string> argv = {
      python,          "-m", "auditwheel", "repair", "--plat", "auto", "--disable-isa-ext-check", "--wheel-dir",
      out_dir.string()};
  for (const auto& soname : repair_exclusions(audit)) {
    argv.push_back("--exclude");
    argv.push_back(soname);
  }
  argv.push_back(wheel.string());
  return argv;
}

WheelRepair repair_wheel(const std::string& python, const AuditTool& tool, const WheelAudit& audit,
                         const std::filesystem::path& wheel, const std::filesystem::path& out_dir) {
  WheelRepair repair;
  repair.wheel = wheel;
  repair.excluded = repair_exclusions(audit);
  if (!tool.ready()) {
    repair.error = tool.unavailable;
    return repair;
  }
  if (!audit.ran) {
    repair.error = "the wheel was not audited: " + audit.skipped_reason;
    return repair;
  }
  for (const auto& need : audit.not_portable()) {
    if (need.from == LibrarySource::missing) {
      repair.error = need.soname + " is found nowhere on this machine: there is nothing to bundle";
      return repair;
    }
    repair.bundled.push_back(need.soname);
  }
  try {
    std::error_code ec;
    std::filesystem::remove_all(out_dir, ec);
    std::filesystem::create_directories(out_dir);
    ProcessOptions options;
    options.env_overrides["PYTHONPATH"] = tool.path.string();
    options.env_overrides["PYTHONDONTWRITEBYTECODE"] = "1";
    const char* path = std::getenv("PATH");
    options.env_overrides["PATH"] = tool.bin_dir().string() + (path && *path ? ":" + std::string(path) : "");
    options.timeout = std::chrono::minutes(10);
    const auto result = run_process(repair_command(python, audit, wheel, out_dir), options);
    if (!result.succeeded()) {
      // auditwheel says why on its last line ("cannot repair ... too-recent versioned symbols").
      const auto lines = split_any(result.err.empty() ? result.out : result.err, "\n");
      repair.error = "auditwheel repair failed: " + secrets::scrub(lines.empty() ? "no message" : lines.back());
      return repair;
    }
    std::vector<std::filesystem::path> made;
    for (const auto& entry : std::filesystem::directory_iterator(out_dir))
      if (entry.path().extension() == ".whl") made.push_back(entry.path());
    if (made.size() != 1) {
      repair.error = "auditwheel repair wrote " + std::to_string(made.size()) + " wheels to " + out_dir.string() +
                     ", not one";
      return repair;
    }
    const auto name = WheelName::parse(made.front().filename().string());
    if (!name) {
      repair.error = "auditwheel repair wrote " + made.front().filename().string() + ", which is no wheel's name";
      return repair;
    }
    repair.wheel = made.front();
    repair.platform_tag = name->platform;
  } catch (const std::exception& error) {  // UserError (not started), filesystem_error
    repair.error = secrets::scrub(error.what());
  }
  return repair;
}

}  // namespace archbuild
