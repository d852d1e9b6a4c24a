#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cache/build_report.h"
#include "cache/cache_key.h"
#include "cache/key_inputs.h"
#include "cache/wheel_store.h"
#include "core/ed25519.h"

namespace archbuild {

// Who and when, for the provenance statement: the session's clock and host.
struct PublishOrigin {
  std::string repository;  // the source's URL
  std::string started_at;  // UTC, ISO 8601
  std::string host;
  const Ed25519Key* signer = nullptr;  // the site's key (signing_key setting), or none
};

// Publishes one build: its wheels, variant wheels, manifest (`report`, with
// `published_at` already set), provenance statement and SBOM as one store
// entry (written aside, renamed into place), then the index: only this
// entry's project pages, or the whole index when it replaces an entry of its
// key. SIGINT/SIGTERM in between are only recorded, so the index is never
// left more than this entry behind its store. Fills report.store and
// report.index, and report.build["index_seconds"]; returns the entry.
StoreEntry publish_build(const std::filesystem::path& cache_dir, const CacheKey& key, const KeyInputs& recorded_inputs,
                         const std::vector<std::filesystem::path>& wheels,
                         const std::vector<std::filesystem::path>& variants, const PublishOrigin& origin,
                         BuildReport& report);

// The entry's provenance statement (in a DSSE envelope) and SBOM, by file name.
std::vector<std::pair<std::string, std::string>> provenance_files(
    const std::string& key_hash, const KeyInputs& recorded_inputs, const BuildReport& report,
    const std::string& manifest, const std::vector<std::filesystem::path>& variants, const PublishOrigin& origin);

}  // namespace archbuild
