#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "cache/wheel_store.h"

namespace archbuild {

// How `cache ls`, `cache show` and `cache gc` describe a published build.

// "checked", "launched", "loaded", "static", "none", or "?" for an entry
// without a readable manifest.
std::string validation_word(const StoreEntry& entry);

// "2026-12-01 08:00" from the manifest's publish time; "?" when unknown.
std::string short_publish_time(const StoreEntry& entry);

// The entry as `--json` lists it: key, dir, recipe, ref, arch list, CUDA,
// wheels, bytes, publish time, validation level and kernel census.
nlohmann::json store_entry_json(const StoreEntry& entry);

}  // namespace archbuild
