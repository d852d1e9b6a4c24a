#include "cache/provenance.h"

#include "core/error.h"
#include "core/json_text.h"
#include "core/regular_file.h"
#include "core/secrets.h"
#include "core/sha256.h"
#include "core/strings.h"
#include "wheel/pinned_wheel.h"
#include "wheel/wheel_archive.h"

namespace archbuild {

namespace {

constexpr uint64_t kMaxProvenanceBytes = 16u << 20;
constexpr const char* kBuildType = "urn:archbuild:wheel-build:v1";

std::string purl(const ReportedWheel& wheel) {
  auto name = WheelName::parse(wheel.file);
  if (!name) return "";
  std::string version = name->version;
  for (size_t at; (at = version.find('+')) != std::string::npos;) version.replace(at, 1, "%2B");
  return "pkg:pypi/" + to_lower(name->name) + "@" + version + "?file_name=" + wheel.file;
}

}  // namespace

nlohmann::json provenance_statement(const ProvenanceInputs& in) {
  auto subjects = nlohmann::json::array();
  for (const auto& wheel : in.wheels)
    subjects.push_back({{"name", wheel.file}, {"digest", {{"sha256", wheel.sha256}}}});
  subjects.push_back({{"name", "manifest.json"}, {"digest", {{"sha256", in.manifest_sha256}}}});
  for (const auto& [name, sha256] : in.other_subjects)
    subjects.push_back({{"name", name}, {"digest", {{"sha256", sha256}}}});

  const KeyInputs& key = in.key_inputs;
  nlohmann::json external = {{"recipe", key.recipe()},
                             {"ref", key.ref()},
                             {"arch_list", key.arch_list()},
                             {"arch_enforcement", key.arch_enforcement()}};
  for (const auto& [name, value] : key.extra_env()) external["env"][name] = value;  // hashed: --env may carry secrets
  nlohmann::json internal = {{"cache_key", in.key_hash}};
  auto dependencies = nlohmann::json::array();
  const auto commit = key.source_commit();
  // pip's spelling of the exact source: git+URL@COMMIT#subdirectory=DIR
  const auto subdirectory = key.subdirectory();
  if (!commit.empty())
    dependencies.push_back({{"name", "source"},
                            {"uri", "git+" + secrets::scrub(in.repository) + "@" + commit +
                                        (subdirectory.empty() ? "" : "#subdirectory=" + subdirectory)},
                            {"digest", {{"gitCommit", commit}}}});
  if (!subdirectory.empty()) external["subdirectory"] = subdirectory;
  for (const auto& [name, value] : key.dependencies())
    if (auto wheel = PinnedWheel::parse(value))
      dependencies.push_back({{"name", wheel->file}, {"digest", {{"sha256", wheel->sha256}}}});
  for (const auto& [name, sha256] : key.patches())
    dependencies.push_back({{"name", "patch " + name}, {"digest", {{"sha256", sha256}}}});
  if (auto sdist = key.sdist_sha256()) dependencies.push_back({{"name", "sdist"}, {"digest", {{"sha256", *sdist}}}});
  for (const auto& [path, submodule] : key.submodules())
    dependencies.push_back({{"name", "submodule " + path}, {"digest", {{"gitCommit", submodule}}}});
  // The rest: toolkit, host compiler, python tag, build.env.*, build.requires.*, ...
  for (const auto& [name, value] : key.values()) {
    const bool listed = KeyInputs::names_source(name) || name.starts_with(key_name::extra_env) ||
                        (name.starts_with(key_name::dependency) && PinnedWheel::parse(value));
    if (!listed && !external.contains(name)) internal[name] = value;
  }
  nlohmann::json predicate = {
      {"buildDefinition",
       {{"buildType", kBuildType},
        {"externalParameters", external},
        {"internalParameters", internal},
        {"resolvedDependencies", dependencies}}},
      {"runDetails",
       {{"builder", {{"id", "urn:archbuild:builder:" + in.host}, {"version", {{"archbuild", in.builder}}}}},
        {"metadata", {{"invocationId", in.key_hash}, {"startedOn", in.started_at}, {"finishedOn", in.finished_at}}}}}};
  // What validation proved travels with the statement (the manifest, a subject, has the details).
  if (!in.validation_level.empty()) {
    nlohmann::json annotations = {{"level", in.validation_level}};
    if (!in.kernel_census.empty()) annotations["kernels"] = in.kernel_census;
    if (!in.audit.empty()) annotations["audit"] = in.audit;
    predicate["runDetails"]["byproducts"] = nlohmann::json::array(
        {{{"name", "validation"}, {"annotations", annotations}}});
  }
  return {{"_type", "https://in-toto.io/Statement/v1"},
          {"subject", subjects},
          {"predicateType", "https://slsa.dev/provenance/v1"},
          {"predicate", predicate}};
}

nlohmann::json cyclonedx_sbom(const ProvenanceInputs& in) {
  auto components = nlohmann::json::array();
  auto depends = nlohmann::json::array();
  auto add = [&](nlohmann::json component) {
    depends.push_back(component["bom-ref"]);
    components.push_back(std::move(component));
  };
  const KeyInputs& key = in.key_inputs;
  const auto commit = key.source_commit();
  if (!commit.empty())
    add({{"type", "library"},
         {"bom-ref", "source"},
         {"name", key.recipe() + " source"},
         {"version", commit},
         {"externalReferences", {{{"type", "vcs"}, {"url", secrets::scrub(in.repository)}}}}});
  for (const auto& [name, version] : key.build_requirements())
    add({{"type", "library"},
         {"bom-ref", std::string(key_name::build_requirement) + name},
         {"name", name},
         {"version", version},
         {"scope", "excluded"}});  // used to build, not shipped
  for (const auto& [name, value] : key.dependencies())
    if (auto wheel = PinnedWheel::parse(value))
      add({{"type", "library"},
           {"bom-ref", std::string(key_name::dependency) + name},
           {"name", wheel->file},
           {"hashes", {{{"alg", "SHA-256"}, {"content", wheel->sha256}}}}});
  for (const auto& [path, submodule] : key.submodules())
    add({{"type", "library"},
         {"bom-ref", std::string(key_name::source_submodule) + path},
         {"name", path},
         {"version", submodule}});
  const auto cuda = key.cuda();
  if (!cuda.empty())
    add({{"type", "framework"},
         {"bom-ref", "cuda"},
         {"name", "CUDA toolkit"},
         {"version", cuda},
         {"scope", "excluded"}});
  auto wheel_components = nlohmann::json::array();
  for (const auto& wheel : in.wheels) {
    auto name = WheelName::parse(wheel.file);
    nlohmann::json component = {{"type", "library"},
                                {"bom-ref", wheel.file},
                                {"name", name ? name->name : wheel.file},
                                {"version", name ? name->version : ""},
                                {"hashes", {{{"alg", "SHA-256"}, {"content", wheel.sha256}}}}};
    if (auto url = purl(wheel); !url.empty()) component["purl"] = url;
    wheel_components.push_back(component);
  }
  nlohmann::json main = wheel_components.empty() ? nlohmann::json::object() : wheel_components.front();
  for (size_t i = 1; i < wheel_components.size(); ++i) components.push_back(wheel_components[i]);
  // A serial number that is the same for the same key: a UUID-shaped view of the key.
  const auto& h = in.key_hash.size() >= 32 ? in.key_hash : sha256_hex(in.key_hash);
  const std::string uuid = h.substr(0, 8) + "-" + h.substr(8, 4) + "-4" + h.substr(13, 3) + "-8" + h.substr(17, 3) +
                           "-" + h.substr(20, 12);
  return {{"bomFormat", "CycloneDX"},
          {"specVersion", "1.5"},
          {"serialNumber", "urn:uuid:" + uuid},
          {"version", 1},
          {"metadata",
           {{"timestamp", in.finished_at},
            {"tools", {{"components", {{{"type", "application"}, {"name", "archbuild"}, {"version", in.builder}}}}}},
            {"component", main}}},
          {"components", components},
          {"dependencies", {{{"ref", main.value("bom-ref", "wheel")}, {"dependsOn", depends}}}}};
}

std::string dsse_pae(const std::string& payload_type, const std::string& payload) {
  return "DSSEv1 " + std::to_string(payload_type.size()) + " " + payload_type + " " + std::to_string(payload.size()) +
         " " + payload;
}

nlohmann::json dsse_envelope(const std::string& statement_text, const Ed25519Key* key) {
  auto signatures = nlohmann::json::array();
  if (key)
    signatures.push_back(
        {{"keyid", key->key_id()}, {"sig", base64_encode(key->sign(dsse_pae(kInTotoPayloadType, statement_text)))}});
  return {{"payloadType", kInTotoPayloadType}, {"payload", base64_encode(statement_text)}, {"signatures", signatures}};
}

namespace {

struct ReadEnvelope {
  std::string payload;
  nlohmann::json statement;
  nlohmann::json signatures;
};

// Reads and parses the envelope, or says why not.
std::string read_envelope(const std::filesystem::path& file, ReadEnvelope& out) {
  std::string text;
  if (auto why = read_regular_file(file, kMaxProvenanceBytes, text); !why.empty()) return kProvenanceFile + (" " + why);
  auto envelope = nlohmann::json::parse(text, nullptr, false);
  if (!envelope.is_object() || json_string(envelope, "payloadType") != kInTotoPayloadType ||
      !envelope["payload"].is_string() || !envelope["signatures"].is_array())
    return std::string(kProvenanceFile) + ": not a DSSE envelope of an in-toto statement";
  try {
    out.payload = base64_decode(envelope["payload"].get<std::string>());
  } catch (const UserError&) {
    return std::string(kProvenanceFile) + ": its payload is not base64";
  }
  out.statement = nlohmann::json::parse(out.payload, nullptr, false);
  if (!out.statement.is_object() || !out.statement["subject"].is_array())
    return std::string(kProvenanceFile) + ": its payload is not an in-toto statement";
  out.signatures = envelope["signatures"];
  return {};
}

}  // namespace

std::vector<std::string> provenance_problems(const std::filesystem::path& entry_dir,
                                             const std::map<std::string, std::string>& sha256_by_file,
                                             const std::vector<Ed25519Key>& trusted, bool require_signature) {
  std::vector<std::string> problems;
  std::error_code ec;
  const auto file = entry_dir / kProvenanceFile;
  if (!std::filesystem::exists(std::filesystem::symlink_status(file, ec))) {
    if (require_signature) problems.push_back(std::string(kProvenanceFile) + ": missing (a signature is required)");
    return problems;
  }
  ReadEnvelope envelope;
  if (auto why = read_envelope(file, envelope); !why.empty()) return {why};
  std::map<std::string, std::string> subjects;
  // const operator[] on a missing key is undefined: every field through find (json_string)
  for (const auto& subject : envelope.statement["subject"])
    if (const auto name = json_string(subject, "name");
        !name.empty() && subject.contains("digest") && subject.at("digest").is_object())
      subjects[name] = json_string(subject.at("digest"), "sha256");
  // Both ways: every file is a subject, and every subject is still there.
  if (!sha256_by_file.empty())
    for (const auto& [name, digest] : subjects)
      if (!sha256_by_file.count(name))
        problems.push_back(std::string(kProvenanceFile) + ": its subject " + name +
                           " is missing from the entry (removed, or not a regular file)");
  for (const auto& [name, digest] : sha256_by_file) {
    auto it = subjects.find(name);
    if (it == subjects.end())
      problems.push_back(std::string(kProvenanceFile) + ": " + name + " is not one of its subjects" +
                         (name == kSbomFile || name.ends_with(".whl.json")
                              ? " (published by an older archbuild; --rebuild publishes it again)"
                              : ""));
    else if (it->second != digest)
      problems.push_back(std::string(kProvenanceFile) + ": " + name +
                         "'s sha256 differs from the statement's (changed after publishing)");
  }
  if (trusted.empty() && !require_signature) return problems;
  const auto signed_text = dsse_pae(kInTotoPayloadType, envelope.payload);
  bool verified = false;
  for (const auto& signature : envelope.signatures) {
    const auto encoded = json_string(signature, "sig");
    if (encoded.empty()) continue;
    std::string raw;
    try {
      raw = base64_decode(encoded);
    } catch (const UserError&) {
      continue;
    }
    for (const auto& key : trusted) verified = verified || key.verify(signed_text, raw);
  }
  if (!verified)
    problems.push_back(std::string(kProvenanceFile) + ": " +
                       (envelope.signatures.empty() ? "not signed"
                                                    : "no signature verifies with a trusted key (the statement or "
                                                      "its signature changed, or another key signed it)"));
  return problems;
}

bool provenance_is_signed(const std::filesystem::path& entry_dir) {
  ReadEnvelope envelope;
  return read_envelope(entry_dir / kProvenanceFile, envelope).empty() && !envelope.signatures.empty();
}

std::string describe_provenance(const std::filesystem::path& entry_dir, const std::vector<Ed25519Key>& trusted) {
  std::error_code ec;
  if (!std::filesystem::exists(entry_dir / kProvenanceFile, ec)) return "none (published before provenance)";
  ReadEnvelope envelope;
  if (auto why = read_envelope(entry_dir / kProvenanceFile, envelope); !why.empty()) return why;
  if (envelope.signatures.empty()) return "in-toto statement, SLSA provenance v1, unsigned";
  std::string keyid = json_string(envelope.signatures[0], "keyid", "?");
  std::string verdict = trusted.empty() ? "not checked: give --trusted-key" : "does not verify";
  if (!trusted.empty() && provenance_problems(entry_dir, {}, trusted, true).empty()) verdict = "verified";
  return "in-toto statement, SLSA provenance v1, signed by " + keyid.substr(0, 16) + " (" + verdict + ")";
}

}  // namespace archbuild
