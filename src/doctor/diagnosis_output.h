#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "doctor/diagnosis.h"

namespace archbuild {

// The two renderings of a package's diagnosis. Both name the verdict with
// to_string(PackageVerdict), so `doctor` and `doctor --json` always agree.

// The package's lines of `archbuild doctor`: verdict, name, how many CUDA
// libraries (and why it is not judged), then its problems and fixes.
std::string package_text(const PackageDiagnosis& package);

// Fixes cheapest first: "1. official build: WHY" then "   fix: LINE" per
// line; a fix that does not exist here ("none: ...") is "-", without lines.
std::string fixes_text(const std::vector<Fix>& fixes, const std::string& indent);
nlohmann::json fixes_json(const std::vector<Fix>& fixes);  // [{kind, why, lines}]

// name, site_dir, verdict, judged, problems, fixes; the caller adds the
// files' inventories ("files").
nlohmann::json package_json(const PackageDiagnosis& package);

}  // namespace archbuild
