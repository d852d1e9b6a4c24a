#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "arch/arch_target.h"
#include "arch/cuda_version.h"
#include "wheel/build_record.h"

namespace archbuild {

// The wheels a build made, labelled for publishing: each with its local
// version label (`1.0+cu130.sm80.sm90ptx`) and its build record inside, and
// the same build as a variant wheel (PEP 825) where NVIDIA's provider has a
// value for every target.
struct LabelledWheels {
  std::string label;  // "cu130.sm80.sm90ptx"
  std::vector<std::filesystem::path> wheels;
  std::vector<std::filesystem::path> variants;
  std::vector<std::string> notes;  // one line per wheel made, or why none
};

// `record` is the build record every wheel gets (its version is set per
// wheel); `holds` what the wheels hold, which the label names. Variant
// wheels go to `variants_dir`, emptied first (an earlier build's).
LabelledWheels label_wheels(const std::vector<std::filesystem::path>& built, const BuildRecord& record,
                            const ArchList& holds, const CudaVersion& cuda, const std::filesystem::path& variants_dir);

}  // namespace archbuild
