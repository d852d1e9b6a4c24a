// Store entries as `cache verify`, `cache show` and `cache push` read them:
// the entry point the libFuzzer target fuzz_store_entry drives, shared with
// the corpus replay in CI (tests/unit/fuzz/fuzz_corpus_test.cpp). A store
// entry is untrusted input (a shared cache others write): its manifest, its
// provenance envelope and a variant wheel's variant.json may hold any bytes,
// and every reader must name the entry and field and go on, never end in an
// uncaught exception (nlohmann's type_error, say) or a crash.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

#include "cache/provenance.h"
#include "cache/store_maintenance.h"
#include "cache/wheel_store.h"
#include "core/error.h"
#include "core/json_text.h"
#include "core/sha256.h"
#include "fuzz_support.h"

namespace archbuild::fuzz {

// The first byte picks the file the rest replaces: 0 manifest.json, 1
// provenance.intoto.json, 2 the variant wheel's NAME.json. The entry is
// published once (a wheel, a variant wheel, an unsigned statement naming
// them); only that file changes between inputs. Returns the problems found.
inline size_t read_store_entry(std::span<const uint8_t> bytes, const std::filesystem::path& scratch) {
  if (bytes.empty()) return 0;
  const auto cache = scratch / "store-cache";
  WheelStore store(cache);
  static const std::string key_text = "cache_format 2\nfuzz store entry\n";
  if (!store.find({key_text, sha256_hex(key_text)})) {
    const auto inputs_dir = scratch / "store-inputs";
    write_bytes(inputs_dir / "demo-1.0-py3-none-any.whl", "wheel");
    write_bytes(inputs_dir / "demo-1.0-py3-none-any-0123abcd.whl", "variant");
    write_bytes(inputs_dir / "demo-1.0-py3-none-any-0123abcd.whl.json", R"({"variants": {"0123abcd": {}}})");
    const std::string manifest = R"({"wheels": [{"file": "demo-1.0-py3-none-any.whl"}]})";
    ProvenanceInputs inputs;
    inputs.manifest_sha256 = sha256_hex(manifest);
    store.publish({key_text, sha256_hex(key_text)}, {inputs_dir / "demo-1.0-py3-none-any.whl"}, manifest,
                  {{kProvenanceFile, json_text(dsse_envelope(json_text(provenance_statement(inputs)), nullptr))}},
                  {inputs_dir / "demo-1.0-py3-none-any-0123abcd.whl"});
  }
  const auto entry_dir = cache / "store" / sha256_hex(key_text);
  const char* targets[] = {"manifest.json", kProvenanceFile, "variants/demo-1.0-py3-none-any-0123abcd.whl.json"};
  write_bytes(entry_dir / targets[bytes[0] % 3], bytes.subspan(1));
  size_t problems = 0;
  try {
    for (const auto& entry : store.entries()) {
      problems += verify_store_entry(entry).size();
      problems += wheel_digest_problems(entry).size();
      problems += entry_provenance_problems(entry, {}, true).size();
      (void)entry_wheel_bytes(entry);
      (void)gc_group(entry);
    }
  } catch (const UserError&) {
  }
  return problems;
}

}  // namespace archbuild::fuzz
