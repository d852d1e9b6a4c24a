#include "cache/build_publish.h"

#include <chrono>

#include "cache/cache_index.h"
#include "cache/provenance.h"
#include "cache/wheel_store.h"
#include "core/interrupt.h"
#include "core/json_text.h"
#include "core/sha256.h"

namespace archbuild {

std::vector<std::pair<std::string, std::string>> provenance_files(
    const std::string& key_hash, const KeyInputs& recorded_inputs, const BuildReport& report,
    const std::string& manifest, const std::vector<std::filesystem::path>& variants, const PublishOrigin& origin) {
  ProvenanceInputs provenance{key_hash,
                              recorded_inputs,
                              origin.repository,
                              report.wheels,
                              sha256_hex(manifest),
                              origin.started_at,
                              report.published_at,
                              ARCHBUILD_VERSION,
                              origin.host,
                              to_string(report.validation_level),
                              report.kernel_census_summary(),
                              report.audit_summary()};
  for (const auto& variant : variants) {
    provenance.wheels.push_back(ReportedWheel::of(variant));
    // its variant.json: the index's variants document is made from it
    if (const auto sidecar = std::filesystem::path(variant.string() + ".json"); std::filesystem::exists(sidecar))
      provenance.other_subjects[sidecar.filename().string()] = sha256_file_hex(sidecar);
  }
  const auto sbom = json_text(cyclonedx_sbom(provenance)) + "\n";
  provenance.other_subjects[kSbomFile] = sha256_hex(sbom);
  const auto statement = json_text(provenance_statement(provenance));
  return {{kProvenanceFile, json_text(dsse_envelope(statement, origin.signer)) + "\n"}, {kSbomFile, sbom}};
}

StoreEntry publish_build(const std::filesystem::path& cache_dir, const CacheKey& key, const KeyInputs& recorded_inputs,
                         const std::vector<std::filesystem::path>& wheels,
                         const std::vector<std::filesystem::path>& variants, const PublishOrigin& origin,
                         BuildReport& report) {
  WheelStore store(cache_dir);
  // From the entry's rename into the store until the index lists it.
  std::optional<InterruptibleScope> whole_publish(std::in_place);
  // A rebuild replaces its key's entry, whose wheels may have other names:
  // then the whole index; else only what this entry adds (fleet-sized stores).
  const bool replaces = store.find(key).has_value();
  const auto manifest = json_text(report.to_json());
  // The entry it replaces is deleted once the index links the new wheels.
  auto staged = store.stage(key, wheels, manifest,
                            provenance_files(key.hash, recorded_inputs, report, manifest, variants, origin), variants);
  auto entry = staged.commit();
  report.store = entry.dir;
  const auto index_started = std::chrono::steady_clock::now();
  auto index = replaces ? refresh_cache_index(cache_dir, store) : publish_to_cache_index(cache_dir, store, entry);
  staged.remove_replaced();
  report.build["index_seconds"] =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - index_started).count();
  whole_publish.reset();
  report.index = index.simple_dir;
  return entry;
}

}  // namespace archbuild
