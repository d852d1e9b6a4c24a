#pragma once

#include <nlohmann/json.hpp>

#include "pipeline/host_context.h"

namespace archbuild {

nlohmann::json to_json(const ArchList& list);
nlohmann::json to_json(const GpuReport& report);
nlohmann::json to_json(const Toolchain& toolchain);

// Prints JSON to stdout, pretty, with a newline.
void print_json(const nlohmann::json& value);

}  // namespace archbuild
