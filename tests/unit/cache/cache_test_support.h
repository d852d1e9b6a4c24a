#pragma once

#include <string>
#include <utility>

#include "cache/build_report.h"
#include "cache/cache_key.h"
#include "cache/provenance.h"
#include "cache/wheel_store.h"
#include "core/json_text.h"
#include "core/sha256.h"
#include "test_support.h"

namespace archbuild {

// A cache key whose text is `text` (and whose hash is that text's sha256).
inline CacheKey key_of(const std::string& text) { return {text, sha256_hex(text)}; }

// The manifest of dir's demo wheel, and provenance inputs naming it, the
// manifest and the variant wheel beside it.
inline std::pair<std::string, ProvenanceInputs> manifest_and_inputs(const TempDir& dir) {
  BuildReport report;
  report.wheels = {ReportedWheel::of(dir.path / "demo-1.0-py3-none-any.whl")};
  auto manifest = json_text(report.to_json());
  ProvenanceInputs inputs;
  inputs.wheels = report.wheels;
  inputs.wheels.push_back(ReportedWheel::of(dir.path / "demo-1.0-py3-none-any-0123abcd.whl"));
  inputs.manifest_sha256 = sha256_hex(manifest);
  return {manifest, inputs};
}

// A wheel's bytes, published with a manifest and an unsigned provenance whose
// subjects are the wheel, the manifest and the variant wheel as published.
inline StoreEntry publish_with_provenance(const TempDir& dir, const WheelStore& store, const std::string& ref) {
  write(dir.path / "demo-1.0-py3-none-any.whl", "wheel " + ref);
  write(dir.path / "demo-1.0-py3-none-any-0123abcd.whl", "variant " + ref);
  const auto [manifest, inputs] = manifest_and_inputs(dir);
  const auto envelope = json_text(dsse_envelope(json_text(provenance_statement(inputs)), nullptr));
  return store.publish(key_of("cache_format 1\nref " + ref + "\n"), {dir.path / "demo-1.0-py3-none-any.whl"}, manifest,
                       {{kProvenanceFile, envelope}}, {dir.path / "demo-1.0-py3-none-any-0123abcd.whl"});
}

}  // namespace archbuild
