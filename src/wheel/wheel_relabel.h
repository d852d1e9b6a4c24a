#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "arch/arch_target.h"
#include "arch/cuda_version.h"

namespace archbuild {

// The PEP 440 local version label that tells wheels of one version apart by
// toolkit and arch set: "cu130.sm90", "cu130.sm80.sm90a.sm120ptx",
// "cu128.compute86" (PTX only). Lowercase alphanumerics joined by dots, as
// PEP 440 allows; pip's `==2.9.1` still matches `2.9.1+cu130.sm90`.
std::string local_version_label(const CudaVersion& cuda, const ArchList& archs);
// Its first part, the toolkit: "cu130".
std::string cuda_label(const CudaVersion& cuda);

// "2.9.1" + label -> "2.9.1+LABEL"; a version that has a local part already
// ("2.9.0a0+git1a2b3c") gets the label appended to it: "2.9.0a0+git1a2b3c.LABEL".
std::string version_with_label(const std::string& version, const std::string& label);

struct RelabeledWheel {
  std::filesystem::path path;  // the new file, beside the old one
  std::string version;         // "2.9.1+cu130.sm90"
};

// A file archbuild adds to the wheel's .dist-info ("archbuild.json").
struct DistInfoFile {
  std::string name;  // a plain file name, no directory
  std::string content;
};

// Rewrites `wheel` to carry `label`: the file name, the .dist-info and .data
// directory names, METADATA's Version and RECORD (paths and METADATA's hash)
// change, and `added` files go into the .dist-info (replacing any of that
// name) with their RECORD rows; every other member is copied as stored (no
// recompression). The new wheel is written to a temporary file and renamed
// into place; the old file is removed only after that. Relabeling to the
// label a wheel already has, with nothing to add, is a no-op. Throws
// UserError(bad_input) naming the wheel and what is wrong.
RelabeledWheel relabel_wheel(const std::filesystem::path& wheel, const std::string& label,
                             const std::vector<DistInfoFile>& added = {});

}  // namespace archbuild
