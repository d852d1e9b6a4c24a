#include "cache/provenance.h"

#include <gtest/gtest.h>

#include "core/json_text.h"
#include "test_support.h"

using namespace archbuild;

TEST(Provenance, DssePaeIsTheSpecsEncoding) {
  // The DSSE specification's own example.
  EXPECT_EQ(dsse_pae("http://example.com/HelloWorld", "hello world"),
            "DSSEv1 29 http://example.com/HelloWorld 11 hello world");
  EXPECT_EQ(base64_decode(base64_encode("a\\0b\xff")), "a\\0b\xff");
  EXPECT_EQ(base64_encode("hello"), "aGVsbG8=");
  EXPECT_NE(error_of([] { base64_decode("not base64!"); }).find("not base64"), std::string::npos);
}

TEST(Provenance, SignedStatementsVerifyAndChangesAreNamed) {
  TempDir dir;
  Ed25519Key::generate(dir.path / "site.key");
  const auto key = Ed25519Key::load_private(dir.path / "site.key");
  const auto trusted = Ed25519Key::parse_public(read(dir.path / "site.key.pub"), "site.key.pub");
  EXPECT_EQ(trusted.key_id(), key.key_id());
  ProvenanceInputs inputs;
  inputs.key_hash = std::string(64, 'a');
  inputs.key_inputs = KeyInputs(
      {{"recipe", "torch"}, {"source.commit", std::string(40, 'c')}, {"env.TOKEN", "sha256:x"}});
  inputs.repository = "https://github.com/pytorch/pytorch.git";
  inputs.wheels = {{"torch-2.9.1+cu130.sm90-cp311-cp311-linux_x86_64.whl", {}, std::string(64, 'd'), 1}};
  inputs.manifest_sha256 = std::string(64, 'e');
  const auto statement = provenance_statement(inputs);
  EXPECT_EQ(statement["predicate"]["buildDefinition"]["externalParameters"]["env"]["TOKEN"], "sha256:x");
  EXPECT_EQ(statement["predicate"]["buildDefinition"]["resolvedDependencies"][0]["uri"],
            "git+https://github.com/pytorch/pytorch.git@" + std::string(40, 'c'));
  write(dir.path / "entry" / kProvenanceFile, json_text(dsse_envelope(json_text(statement), &key)));
  std::map<std::string, std::string> digests = {{inputs.wheels[0].file, std::string(64, 'd')},
                                                {"manifest.json", std::string(64, 'e')}};
  EXPECT_TRUE(provenance_problems(dir.path / "entry", digests, {trusted}, true).empty());
  digests["manifest.json"] = std::string(64, 'f');
  auto problems = provenance_problems(dir.path / "entry", digests, {trusted}, true);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0],
            "provenance.intoto.json: manifest.json's sha256 differs from the statement's (changed after "
            "publishing)");
  // Another key's signature does not count; an unsigned one fails only when a signature is required.
  Ed25519Key::generate(dir.path / "other.key");
  const auto other = Ed25519Key::parse_public(read(dir.path / "other.key.pub"), "other.key.pub");
  digests["manifest.json"] = std::string(64, 'e');
  EXPECT_EQ(provenance_problems(dir.path / "entry", digests, {other}, false).size(), 1u);
  write(dir.path / "entry" / kProvenanceFile, json_text(dsse_envelope(json_text(statement), nullptr)));
  EXPECT_TRUE(provenance_problems(dir.path / "entry", digests, {}, false).empty());
  EXPECT_EQ(provenance_problems(dir.path / "entry", digests, {trusted}, true),
            std::vector<std::string>{"provenance.intoto.json: not signed"});
  write(dir.path / "entry" / kProvenanceFile, "{\"payloadType\": \"text/plain\"}");
  EXPECT_NE(provenance_problems(dir.path / "entry", digests, {}, false)[0].find("not a DSSE envelope"),
            std::string::npos);
}
