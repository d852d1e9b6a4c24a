"""Variant wheels (PEP 825) beside the labelled ones, checked with variantlib
0.2.2 from PyPI: two arch sets of one version (a mixed fleet) give two variant
wheels and one {name}-{version}-variants.json listing both; variantlib
analyzes each wheel, computes the same labels, and generates the same index
document from the wheels; plain pip still installs the labelled wheel; a
changed variant wheel is caught by `cache verify`; an arch-specific target
gets no variant wheel, saying why."""
import json
import os
import re
import shutil
import subprocess
import sys
import unittest

from fixture_project import data_dir_with_recipe, make_cuda_project
from harness import SYSTEM_NVCC, pip_target, run, scratch_dir


@unittest.skipUnless(SYSTEM_NVCC.exists(), "needs nvcc 13 at /usr/local/cuda")
class Variants(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = scratch_dir(cls)
        cls.variantlib = pip_target("tools/variantlib-0.2.2", ["variantlib==0.2.2"])
        cls.env = {"ARCHBUILD_DATA_DIR": str(data_dir_with_recipe(cls.dir, make_cuda_project(cls.dir))),
                   "ARCHBUILD_FAKE_GPUS": None}
        cls.cache = cls.dir / "cache"
        for arch in ("9.0", "8.0;9.0+PTX"):
            built = run("build", "fixture", "--arch", arch, "--cache-dir", str(cls.cache), env=cls.env)
            assert built.returncode == 0, built.stderr
        cls.wheels = cls.cache / "wheels"
        cls.variant_wheels = sorted(cls.wheels.glob("fixture-1.0-py3-none-linux_x86_64-*.whl"))

    def variantlib_cli(self, *args):
        return subprocess.run([sys.executable, str(self.variantlib / "bin" / "variantlib"), *args],
                              env=dict(os.environ, PYTHONPATH=str(self.variantlib)), capture_output=True, text=True)

    def test_variantlib_reads_the_wheels_and_the_index_document(self):
        self.assertEqual(len(self.variant_wheels), 2)
        properties = {}
        for wheel in self.variant_wheels:
            result = self.variantlib_cli("analyze-wheel", "-i", str(wheel))
            self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
            label = wheel.stem.rsplit("-", 1)[1]
            properties[label] = sorted(re.findall(r"nvidia :: \w+ :: [\w.]+", result.stdout + result.stderr))
            # the label is variantlib's own hash of the properties
            args = [item for p in properties[label] for item in ("-p", p)]
            self.assertEqual(self.variantlib_cli("get-variant-hash", *args).stdout.strip().splitlines()[-1], label)
        self.assertEqual(sorted(properties.values()), [
            ["nvidia :: cuda_version_lower_bound :: 13.0", "nvidia :: sm_arch :: 80_real",
             "nvidia :: sm_arch :: 90_real", "nvidia :: sm_arch :: 90_virtual"],
            ["nvidia :: cuda_version_lower_bound :: 13.0", "nvidia :: sm_arch :: 90_real"]])
        ours = json.loads((self.wheels / "fixture-1.0-variants.json").read_text())
        generated = self.dir / "generated"
        generated.mkdir()
        for wheel in self.variant_wheels:
            shutil.copy(wheel, generated)
        self.variantlib_cli("generate-index-json", "-d", str(generated))
        theirs = json.loads((generated / "fixture-1.0-variants.json").read_text())
        self.assertEqual(ours["variants"], theirs["variants"])
        self.assertEqual(ours["providers"], theirs["providers"])
        page = (self.cache / "simple" / "fixture" / "index.html").read_text()
        self.assertIn("fixture-1.0-variants.json#sha256=", page)

    def test_a_mixed_fleet_gets_the_variant_each_node_supports(self):
        # variantlib's own resolver, given what NVIDIA's provider reports on each
        # kind of node (its supported values: the GPU family's _real up to its
        # minor and the family's _virtual; the driver's CUDA and below).
        resolve = r"""
import json, sys
from variantlib.models.variant import VariantProperty
from variantlib.resolver.lib import sort_and_filter_supported_variants
from variantlib.variants_json import VariantsJson
document = VariantsJson(json.load(open(sys.argv[1])))
for node, supported in json.loads(sys.argv[2]).items():
    props = [VariantProperty.from_str(p) for p in supported]
    picked = sort_and_filter_supported_variants(list(document.variants.values()), props, ["nvidia"])
    print(json.dumps([node, [v.label for v in picked if v.label != "null"]]))  # null: the always-fine fallback
"""
        nodes = {
            "h200": ["nvidia :: sm_arch :: 90_real", "nvidia :: sm_arch :: 90_virtual",
                     "nvidia :: cuda_version_lower_bound :: 13.0", "nvidia :: cuda_version_lower_bound :: 12.9"],
            "a100": ["nvidia :: sm_arch :: 80_real", "nvidia :: sm_arch :: 80_virtual",
                     "nvidia :: cuda_version_lower_bound :: 13.0"],
            "old_driver_h200": ["nvidia :: sm_arch :: 90_real", "nvidia :: sm_arch :: 90_virtual",
                                "nvidia :: cuda_version_lower_bound :: 12.8"],
        }
        result = subprocess.run([sys.executable, "-c", resolve, str(self.wheels / "fixture-1.0-variants.json"),
                                 json.dumps(nodes)], env=dict(os.environ, PYTHONPATH=str(self.variantlib)),
                                capture_output=True, text=True)
        self.assertEqual(result.returncode, 0, result.stderr)
        picked = dict(json.loads(line) for line in result.stdout.splitlines())
        labels = {wheel.stem.rsplit("-", 1)[1]: wheel for wheel in self.variant_wheels}
        only_90, with_80 = sorted(labels, key=lambda label: "80_real" in self.variant_props(labels[label]))
        self.assertEqual(sorted(picked["h200"]), sorted([only_90, with_80]))  # both serve CC 9.0
        self.assertEqual(picked["a100"], [with_80])  # only the 8.0;9.0+PTX build has 80_real
        self.assertEqual(picked["old_driver_h200"], [])  # a CUDA 12.8 driver cannot run CUDA 13.0 builds

    def variant_props(self, wheel):
        result = self.variantlib_cli("analyze-wheel", "-i", str(wheel))
        return result.stdout + result.stderr

    def test_plain_pip_still_installs_the_labelled_wheel(self):
        venv = self.dir / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        result = subprocess.run([str(venv / "bin" / "pip"), "install", "--disable-pip-version-check", "--index-url",
                                 f"file://{self.cache}/simple", "fixture"], capture_output=True, text=True)
        self.assertEqual(result.returncode, 0, result.stderr)
        listed = subprocess.run([str(venv / "bin" / "pip"), "list"], capture_output=True, text=True).stdout
        self.assertRegex(listed, r"fixture\s+1\.0\+cu130\.")

    def test_a_changed_variant_wheel_is_caught_and_a_targets_get_none(self):
        cache = self.dir / "cache-copy"
        shutil.copytree(self.cache, cache, symlinks=True)
        stored = sorted((cache / "store").glob("*/variants/*.whl"))[0]
        stored.write_bytes(stored.read_bytes() + b"\0")
        result = run("cache", "verify", "--cache-dir", str(cache))
        self.assertEqual(result.returncode, 1)
        self.assertIn(f"provenance.intoto.json: {stored.name}'s sha256 differs from the statement's", result.stdout)
        built = run("build", "fixture", "--arch", "9.0a", "--cache-dir", str(self.dir / "cache-a"), env=self.env)
        self.assertEqual(built.returncode, 0, built.stderr)
        self.assertIn("no variant wheel: 9.0a has an a/f target", built.stderr)


if __name__ == "__main__":
    unittest.main()
