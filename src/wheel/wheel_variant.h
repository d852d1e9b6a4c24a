#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "arch/arch_target.h"
#include "arch/cuda_version.h"

namespace archbuild {

// Wheel variants (PEP 817 / PEP 825, drafts; checked with variantlib 0.2.2):
// one version published as several builds, each with properties an
// installer's provider matches against the machine.

// NVIDIA's provider's features: "sm_arch" -> ["80_real", "90_real",
// "90_virtual"] (SASS as _real, PTX as _virtual), "cuda_version_lower_bound"
// -> ["13.0"] (the driver must support the toolkit). nullopt when a target
// has no such value (sm_90a, sm_100f).
using VariantFeatures = std::map<std::string, std::vector<std::string>>;
std::optional<VariantFeatures> nvidia_variant_features(const ArchList& targets, const CudaVersion& cuda);

// variantlib's default label: the first 8 hex digits of the sha256 over the
// sorted "nvidia :: FEATURE :: VALUE\n" lines.
std::string variant_label(const VariantFeatures& features);

// variant.json (in the wheel's .dist-info) and {name}-{version}-variants.json
// (beside the wheels in the index): the same document, with one label or all.
nlohmann::json variants_document(const std::map<std::string, VariantFeatures>& by_label);

// "fixture-1.0-py3-none-linux_x86_64.whl" + label -> "...-linux_x86_64-LABEL.whl"
std::string variant_file_name(const std::string& wheel_file, const std::string& label);
// "{name}-{version}-variants.json" for a (variant) wheel's file name.
std::string variants_index_file_name(const std::string& wheel_file);

}  // namespace archbuild
