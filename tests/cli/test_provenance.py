"""Provenance you can verify: a build signed with a site key (`cache keygen`,
`--signing-key`) carries an in-toto statement with a SLSA provenance
predicate in a DSSE envelope and a CycloneDX SBOM beside its wheel; the
in-toto packages from PyPI (in-toto's securesystemslib, in-toto-attestation)
and cyclonedx-python-lib check their format and the signature; `cache push`
carries them; `cache verify` catches a changed manifest, statement or key by
name, and `--require-signature` an unsigned build."""
import base64
import json
import os
import shutil
import subprocess
import sys
import unittest

from fixture_project import data_dir_with_recipe, make_cuda_project
from harness import SYSTEM_NVCC, pip_target, run, scratch_dir

CHECKER = r'''
import base64, copy, json, sys
from cryptography.hazmat.primitives import serialization
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator
from google.protobuf import json_format
from in_toto_attestation.predicates.provenance.v1 import provenance_pb2
from in_toto_attestation.v1 import statement, statement_pb2
from securesystemslib.dsse import Envelope
from securesystemslib.signer import SSlibKey

entry, public_key = sys.argv[1], sys.argv[2]
envelope = json.load(open(f"{entry}/provenance.intoto.json"))
payload = base64.b64decode(envelope["payload"])
statement.Statement.copy_from_pb(json_format.Parse(payload, statement_pb2.Statement())).validate()
provenance = json_format.ParseDict(json.loads(payload)["predicate"], provenance_pb2.Provenance())
key = SSlibKey.from_crypto(serialization.load_pem_public_key(open(public_key, "rb").read()),
                           keyid=envelope["signatures"][0]["keyid"])
Envelope.from_dict(copy.deepcopy(envelope)).verify([key], 1)  # raises unless the signature verifies
errors = JsonStrictValidator(SchemaVersion.V1_5).validate_str(open(f"{entry}/sbom.cdx.json").read())
assert errors is None, errors
print(json.dumps({"subjects": {s["name"]: s["digest"]["sha256"] for s in json.loads(payload)["subject"]},
                  "builder": provenance.run_details.builder.id,
                  "dependencies": [d.name for d in provenance.build_definition.resolved_dependencies]}))
'''


@unittest.skipUnless(SYSTEM_NVCC.exists(), "needs nvcc 13 at /usr/local/cuda")
class Provenance(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = scratch_dir(cls)
        cls.tools = pip_target("tools/in-toto-3.1.0", [
            "in-toto==3.1.0", "in-toto-attestation==0.9.3", "cyclonedx-python-lib[json-validation]==11.12.0"])
        cls.env = {"ARCHBUILD_DATA_DIR": str(data_dir_with_recipe(cls.dir, make_cuda_project(cls.dir))),
                   "ARCHBUILD_FAKE_GPUS": None}
        cls.cache = cls.dir / "cache"
        cls.key = cls.dir / "keys" / "site.key"
        cls.key.parent.mkdir()
        made = run("cache", "keygen", str(cls.key))
        assert made.returncode == 0, made.stderr
        built = run("build", "fixture", "--arch", "9.0", "--cache-dir", str(cls.cache), "--signing-key", str(cls.key),
                    "--json", env=cls.env)
        assert built.returncode == 0, built.stderr
        cls.report = json.loads(built.stdout)
        cls.entry = cls.cache / "store" / cls.report["key"]

    def verify(self, cache, *args):
        return run("cache", "verify", "--cache-dir", str(cache), *args)

    def test_formats_and_signature_as_the_in_toto_tools_read_them(self):
        self.assertEqual(oct(self.key.stat().st_mode & 0o777), "0o600")
        checked = subprocess.run([sys.executable, "-c", CHECKER, str(self.entry), f"{self.key}.pub"],
                                 env=dict(os.environ, PYTHONPATH=str(self.tools)), capture_output=True, text=True)
        self.assertEqual(checked.returncode, 0, checked.stderr)
        facts = json.loads(checked.stdout)
        wheel = self.report["wheels"][0]
        self.assertEqual(facts["subjects"][wheel["file"]], wheel["sha256"])
        self.assertIn("manifest.json", facts["subjects"])
        self.assertEqual(facts["dependencies"], ["source", "submodule third_party/vecmath"])
        result = self.verify(self.cache, "--trusted-key", f"{self.key}.pub", "--require-signature")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        shown = run("cache", "show", self.report["key"][:12], "--cache-dir", str(self.cache), "--trusted-key",
                    f"{self.key}.pub").stdout
        self.assertIn("provenance in-toto statement, SLSA provenance v1, signed by ", shown)
        self.assertIn("(verified)", shown)
        self.assertIn("(CycloneDX 1.5)", shown)
        # the wheel audit travels with the statement and is shown: the fixture needs only CUDA and the system
        envelope = json.loads((self.entry / "provenance.intoto.json").read_text())
        annotations = json.loads(base64.b64decode(envelope["payload"]))["predicate"]["runDetails"]["byproducts"][0][
            "annotations"]
        self.assertTrue(annotations["audit"].startswith("portable as manylinux_2_"), annotations)
        self.assertIn("audit      " + annotations["audit"], shown)

    def test_push_carries_them_and_verify_catches_changes_by_name(self):
        dest = self.dir / "shared"
        pushed = run("cache", "push", str(dest), "--cache-dir", str(self.cache))
        self.assertEqual(pushed.returncode, 0, pushed.stderr)
        entry = dest / "store" / self.report["key"]
        self.assertEqual((entry / "provenance.intoto.json").read_bytes(), (self.entry / "provenance.intoto.json").read_bytes())
        self.assertTrue((entry / "sbom.cdx.json").is_file())
        self.assertEqual(self.verify(dest, "--trusted-key", f"{self.key}.pub").returncode, 0)
        # another site's key does not count
        other = self.dir / "keys" / "other.key"
        self.assertEqual(run("cache", "keygen", str(other)).returncode, 0)
        result = self.verify(dest, "--trusted-key", f"{other}.pub")
        self.assertEqual(result.returncode, 1)
        self.assertIn("provenance.intoto.json: no signature verifies with a trusted key", result.stdout)
        # a changed manifest is named
        manifest = entry / "manifest.json"
        saved = manifest.read_bytes()
        manifest.write_bytes(saved.replace(b'"published": true', b'"published": true '))
        result = self.verify(dest, "--trusted-key", f"{self.key}.pub")
        self.assertEqual(result.returncode, 1)
        self.assertIn("provenance.intoto.json: manifest.json's sha256 differs from the statement's", result.stdout)
        manifest.write_bytes(saved)
        # a statement changed under its signature (a subject's digest edited) is caught
        envelope_file = entry / "provenance.intoto.json"
        envelope = json.loads(envelope_file.read_text())
        statement = json.loads(base64.b64decode(envelope["payload"]))
        statement["predicate"]["buildDefinition"]["externalParameters"]["arch_list"] = "8.0"
        envelope["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()
        envelope_file.write_text(json.dumps(envelope))
        result = self.verify(dest, "--trusted-key", f"{self.key}.pub")
        self.assertEqual(result.returncode, 1)
        self.assertIn("no signature verifies with a trusted key (the statement or its signature changed", result.stdout)

    def test_unsigned_builds_and_bad_keys(self):
        cache = self.dir / "cache-unsigned"
        built = run("build", "fixture", "--arch", "8.0", "--cache-dir", str(cache), env=self.env)
        self.assertEqual(built.returncode, 0, built.stderr)
        self.assertEqual(self.verify(cache).returncode, 0)  # a statement, unsigned: fine unless asked
        result = self.verify(cache, "--trusted-key", f"{self.key}.pub", "--require-signature")
        self.assertEqual(result.returncode, 1)
        self.assertIn("provenance.intoto.json: not signed", result.stdout)
        # a public key is no signing key; a key file is never overwritten
        result = run("build", "fixture", "--arch", "8.6", "--cache-dir", str(cache), "--signing-key",
                     f"{self.key}.pub", env=self.env)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn(f"{self.key}.pub is not an ed25519 private key in PEM", result.stderr)
        self.assertNotIn("[compile", result.stderr)  # refused before the build
        self.assertFalse((cache / "builds" / "fixture-v1.0" / "build.log").read_text().count("sm_86"))
        result = run("cache", "keygen", str(self.key))
        self.assertEqual(result.returncode, 2)
        self.assertIn("it exists (archbuild never overwrites a key)", result.stderr)
        # an encrypted key: refused at once, never a pass-phrase prompt (stdin is a terminal-less pipe here)
        encrypted = self.dir / "encrypted.key"
        subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-aes-256-cbc", "-pass", "pass:secret",
                        "-out", str(encrypted)], check=True, capture_output=True)
        result = run("build", "fixture", "--arch", "8.6", "--cache-dir", str(cache), "--signing-key", str(encrypted),
                     env=self.env, timeout=120)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn(f"{encrypted} is encrypted (protected by a pass phrase), and archbuild never prompts",
                      result.stderr)
        self.assertNotIn("[compile", result.stderr)
        # a key given to a cache hit of an unsigned entry: said, not silently ignored
        result = run("build", "fixture", "--arch", "8.0", "--cache-dir", str(cache), "--signing-key", str(self.key),
                     env=self.env)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("the cached build was published unsigned and stays so", result.stderr)
        # --require-signature without a key to check with is a usage error, not a verdict on the entries
        result = self.verify(cache, "--require-signature")
        self.assertEqual(result.returncode, 2, result.stdout + result.stderr)
        self.assertIn("--require-signature needs --trusted-key", result.stderr)


if __name__ == "__main__":
    unittest.main()
