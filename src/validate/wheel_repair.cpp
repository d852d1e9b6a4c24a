#include "validate/wheel_repair.h"

#include <algorithm>
#include <cstdlib>
#include <regex>
#include <set>

#include <fnmatch.h>
#include <zip.h>

#include "core/error.h"
#include "core/secrets.h"
#include "core/strings.h"
#include "process/run_process.h"
#include "wheel/wheel_archive.h"

namespace archbuild {

namespace {
// auditwheel's unique name without its hash: libzstd-6bb594bb.so.1.5.4 -> libzstd.so.1.5.4.
std::string unmangled(const std::string& file) {
  static const std::regex hashed(R"(^(.+)-[0-9a-f]{8}(\.so.*)$)");
  std::smatch match;
  return std::regex_match(file, match, hashed) ? match[1].str() + match[2].str() : file;
}

}  // namespace

std::string WheelRepair::summary() const {
  if (!ok()) return "not repaired: " + error;
  if (platform_tag.empty()) return "nothing to repair: the wheel holds no ELF file";
  std::vector<std::string> names;
  for (const auto& file : bundled) names.push_back(unmangled(file));
  return (bundled.empty() ? std::string("nothing to bundle") : "bundled " + join(names, ", ")) + "; tagged " +
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
  // The families too: a bundled library's own need of the driver or CUDA stays theirs.
  std::vector<std::string> excluded(sonames.begin(), sonames.end());
  for (const auto& pattern : audit.exclude_patterns)
    if (!sonames.count(pattern)) excluded.push_back(pattern);
  return excluded;
}

namespace {
// The libraries auditwheel copied in: the members of a top-level `*.libs/` directory.
std::vector<std::string> bundled_members(const std::filesystem::path& wheel) {
  std::vector<std::string> found;
  auto archive = open_wheel_for_reading(wheel);
  const auto count = zip_get_num_entries(archive.get(), 0);
  for (zip_int64_t index = 0; index < count; ++index) {
    const char* name = zip_get_name(archive.get(), static_cast<zip_uint64_t>(index), 0);
    if (!name) continue;
    const std::string member = name;
    const auto slash = member.find('/');
    if (slash != std::string::npos && slash > 5 && member.compare(slash - 5, 5, ".libs") == 0 &&
        slash + 1 < member.size() && member.find('/', slash + 1) == std::string::npos)
      found.push_back(member.substr(slash + 1));
  }
  std::sort(found.begin(), found.end());
  return found;
}
}  // namespace

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
    repair.environment = true;
    return repair;
  }
  if (!audit.ran) {
    repair.error = "the wheel was not audited: " + audit.skipped_reason;
    repair.environment = true;
    return repair;
  }
  if (audit.files.empty()) return repair;  // no ELF file: nothing to repair, the wheel stays as it is
  for (const auto& need : audit.not_portable())
    if (need.from == LibrarySource::missing) {
      repair.error = need.soname + " is found nowhere on this machine: there is nothing to bundle";
      return repair;
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
    // What is in it now, not what the audit expected: a bundled library's own needs come along.
    repair.bundled = bundled_members(repair.wheel);
    for (const auto& file : repair.bundled)
      for (const auto& pattern : audit.exclude_patterns)
        if (::fnmatch(pattern.c_str(), unmangled(file).c_str(), 0) == 0) {
          repair.error = "auditwheel bundled " + file + ", which is the driver's, CUDA's or torch's to give";
          return repair;
        }
  } catch (const std::exception& error) {  // UserError (not started), filesystem_error
    repair.error = secrets::scrub(error.what());
  }
  return repair;
}

}  // namespace archbuild
