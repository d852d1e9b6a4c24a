#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cache/build_report.h"
#include "cache/key_inputs.h"
#include "core/ed25519.h"

namespace archbuild {

// What a published build says of itself, beside its wheels in the store:
// an in-toto Statement (v1) with a SLSA provenance (v1) predicate, in a
// DSSE envelope signed with the site's key when one is set, and a
// CycloneDX (1.5) SBOM of the wheel.
inline constexpr const char* kProvenanceFile = "provenance.intoto.json";
inline constexpr const char* kSbomFile = "sbom.cdx.json";
inline constexpr const char* kInTotoPayloadType = "application/vnd.in-toto+json";

struct ProvenanceInputs {
  std::string key_hash;
  KeyInputs key_inputs;    // the cache key's inputs, --env values hashed
  std::string repository;  // the source's URL
  std::vector<ReportedWheel> wheels;
  std::string manifest_sha256;  // manifest.json is a subject too: a changed one is caught
  std::string started_at, finished_at;
  std::string builder;  // "archbuild 0.1.0"
  std::string host;
  // How far the wheels were proven: "device", "loaded", "static", "none", and
  // the kernel census line ("launched 3 of 4 kernels of this wheel, on 1 GPU").
  std::string validation_level;
  std::string kernel_census;
  std::string audit;  // the wheel audit's summary: whether the wheels load on a node without this machine's libraries
  // Subjects beside the wheels and the manifest: the variant wheels'
  // variant.json files and the SBOM (file name -> sha256).
  std::map<std::string, std::string> other_subjects;
};

nlohmann::json provenance_statement(const ProvenanceInputs& inputs);
nlohmann::json cyclonedx_sbom(const ProvenanceInputs& inputs);

// DSSE's pre-authentication encoding: what a signature covers.
std::string dsse_pae(const std::string& payload_type, const std::string& payload);
// The statement in a DSSE envelope, signed by `key` when given (else no signatures).
nlohmann::json dsse_envelope(const std::string& statement_text, const Ed25519Key* key);

// The entry's provenance checked against its wheels' and manifest's sha256
// (computed by the caller): each problem names what differs. With trusted
// keys, a signature must verify with one of them; with `require_signature`,
// an entry without a verified signature is a problem. No provenance file:
// a problem only when a signature is required.
std::vector<std::string> provenance_problems(const std::filesystem::path& entry_dir,
                                             const std::map<std::string, std::string>& sha256_by_file,
                                             const std::vector<Ed25519Key>& trusted, bool require_signature);

// One line for `cache show`: "signed by KEYID (verified)", "unsigned", "none".
std::string describe_provenance(const std::filesystem::path& entry_dir, const std::vector<Ed25519Key>& trusted);
// Whether the entry's provenance carries a signature (verified or not).
bool provenance_is_signed(const std::filesystem::path& entry_dir);

}  // namespace archbuild
