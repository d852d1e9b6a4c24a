#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace archbuild {

// Where a shared library an ELF file of a wheel needs comes from, on a node
// that installs the wheel (recipes/frontends/wheel_audit.py sorts them).
enum class LibrarySource {
  wheel,    // a file of the wheel itself
  system,   // the manylinux policy's system libraries (libc, libstdc++, ...)
  driver,   // libcuda: every GPU node's own driver
  torch,    // torch/lib of the torch the wheel is validated with
  cuda,     // a CUDA library the nvidia-* wheels torch depends on provide
  machine,  // found only on this machine: a node without it cannot load the wheel
  missing,  // found nowhere here
};
std::string to_string(LibrarySource source);

struct LibraryNeed {
  std::string soname;  // "libzstd.so.1"
  LibrarySource from = LibrarySource::missing;
  std::string path;  // where it resolved here ("" when it did not)
};

struct AuditedFile {
  std::string file;  // wheel member
  std::vector<LibraryNeed> needs;
};

// auditwheel's reading of a wheel (pinned: audit_tool.h) and what archbuild
// makes of it. It reports; it does not fail validation.
struct WheelAudit {
  bool ran = false;
  std::string skipped_reason;  // when it did not run: why
  std::string auditwheel_version;
  // The tag the wheel can carry with torch's, CUDA's and the driver's
  // libraries left to their own wheels: linux_x86_64 while a library is met
  // only on this machine; symbol_tag: the manylinux tag its glibc and
  // libstdc++ symbol versions allow.
  std::string platform_tag, symbol_tag;
  std::vector<std::string> system_libraries;  // the policy's: what every node has (the clean room's root)
  // `auditwheel repair --exclude` patterns (fnmatch, against each soname and
  // real path at every depth): the driver's, CUDA's and torch's families.
  std::vector<std::string> exclude_patterns;
  std::vector<AuditedFile> files;

  // The needs met only on this machine or nowhere, one per soname.
  std::vector<LibraryNeed> not_portable() const;
  bool portable() const { return ran && not_portable().empty(); }
  // The files that link torch's C++ libraries without the shared libstdc++:
  // they carry a static copy of the C++ runtime, and torch's C++ exceptions
  // crash them or lose their message (toolchain/cxx_runtime_link.h).
  std::vector<std::string> own_cxx_runtime() const;
  // "portable as manylinux_2_34_x86_64 (torch's and CUDA's libraries from
  // their own wheels)", "not portable: libzstd.so.1 (/usr/lib/...) is met only
  // on this machine ...", "not audited: ..."
  std::string summary() const;
  nlohmann::json to_json() const;
  // Reads the frontend's answer; throws UserError(environment) naming what
  // is wrong with it.
  static WheelAudit from_frontend_json(const std::string& text);
};

// Runs the frontend on `wheel` with `python`, auditwheel found on
// `tool_path` (PYTHONPATH). A failure to run is a WheelAudit that did not
// run, saying why; never an exception.
WheelAudit audit_wheel(const std::string& python, const std::filesystem::path& tool_path,
                       const std::filesystem::path& wheel);

}  // namespace archbuild
