"""The wheel cache on the fixture project: local version labels, the PEP 503
index real pip installs from, `cache ls|show|verify|gc`, concurrent
publishes, and a publish killed halfway."""
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import time
import unittest
from concurrent.futures import ThreadPoolExecutor

from fixture_project import data_dir_with_recipe, make_cuda_project
from gitrepos import git
from harness import BIN, SYSTEM_NVCC, run, scratch_dir


@unittest.skipUnless(SYSTEM_NVCC.exists(), "needs nvcc 13 at /usr/local/cuda")
class Cache(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = scratch_dir(cls)
        cls.project = make_cuda_project(cls.root)
        git(cls.project, "commit", "-q", "--allow-empty", "-m", "next")
        git(cls.project, "tag", "v1.1")  # another commit: another key, the same wheel version
        cls.data = data_dir_with_recipe(cls.root, cls.project)

    def setUp(self):
        self.dir = scratch_dir(self)
        self.cache = self.dir / "cache"
        self.env = {"ARCHBUILD_DATA_DIR": str(self.data), "ARCHBUILD_FAKE_GPUS": None}

    def build(self, arch, *args, env=None):
        return run("build", "fixture", "--arch", arch, "--cache-dir", str(self.cache), "--json", *args,
                   env=dict(self.env, **(env or {})))

    def cache_cmd(self, *args):
        return run("cache", *args, "--cache-dir", str(self.cache), env=self.env)

    def venv(self):
        venv = self.dir / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        return venv

    def pip_install(self, venv, *args):
        return subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps",
                               "--disable-pip-version-check", *args], capture_output=True, text=True)

    def installed_archs(self, venv):
        library = next(venv.glob("lib/python*/site-packages/fixture/libfixture.so"))
        (entry,) = json.loads(run("inspect", "--json", str(library)).stdout)["files"]
        return sorted(entry["sass"])

    def test_labels_index_and_pip_picks_exactly_one_arch_set(self):
        for arch in ("8.0", "9.0"):
            result = self.build(arch)
            self.assertEqual(result.returncode, 0, result.stderr)
        report = json.loads(result.stdout)
        self.assertEqual(report["local_version_label"], "cu130.sm90")
        self.assertEqual([w["file"] for w in report["wheels"]], ["fixture-1.0+cu130.sm90-py3-none-linux_x86_64.whl"])
        self.assertIn("device check skipped", report["validation_scope"])
        self.assertEqual(report["install"], [
            f"pip install fixture==1.0+cu130.sm90 --extra-index-url file://{self.cache}/simple",
            f"uv pip install fixture==1.0+cu130.sm90 --index file://{self.cache}/simple"])
        page = (self.cache / "simple" / "fixture" / "index.html").read_text()
        self.assertIn("fixture-1.0%2Bcu130.sm80-py3", page)
        self.assertIn("fixture-1.0%2Bcu130.sm90-py3", page)
        # the relabeled wheel is a valid wheel: RECORD and METADATA agree with its new name
        stored = pathlib.Path(report["store"]) / "wheels" / report["wheels"][0]["file"]
        self.assertEqual(run("validate", str(stored), "--arch", "9.0", env=self.env).returncode, 0)
        venv = self.venv()
        result = self.pip_install(venv, "--index-url", f"file://{self.cache}/simple", "fixture==1.0+cu130.sm90")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(self.installed_archs(venv), ["sm_90"])
        result = self.pip_install(venv, "--force-reinstall", "--no-index", "--find-links", str(self.cache / "wheels"),
                                  "fixture==1.0+cu130.sm80")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(self.installed_archs(venv), ["sm_80"])
        version = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "show", "fixture"], capture_output=True,
                                 text=True).stdout
        self.assertIn("Version: 1.0+cu130.sm80", version)

    def test_a_recipe_name_alone_means_build(self):
        result = run("fixture", "--arch", "8.0", "--cache-dir", str(self.cache), "--json", env=self.env)
        self.assertEqual(result.returncode, 0, result.stderr)
        first = json.loads(result.stdout)
        self.assertTrue(first["published"])
        result = self.build("8.0")
        self.assertTrue(json.loads(result.stdout)["cache_hit"])
        self.assertEqual(json.loads(result.stdout)["key"], first["key"])
        unknown = run("fixtur", "--arch", "8.0", env=self.env)
        self.assertEqual(unknown.returncode, 2)

    def test_ls_show_verify_and_gc(self):
        self.assertEqual(self.build("9.0").returncode, 0)
        self.assertEqual(self.build("9.0", "--ref", "v1.1").returncode, 0)  # newer, same project and arch list
        self.assertEqual(self.build("8.0").returncode, 0)
        listing = json.loads(self.cache_cmd("ls", "--json").stdout)["entries"]
        self.assertEqual(len(listing), 3)
        self.assertEqual(listing[1]["ref"], "v1.1")
        self.assertEqual(listing[0]["arch_list"], "8.0")
        result = self.cache_cmd("show", listing[1]["key"][:10])
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("ref v1.1", result.stdout)
        self.assertIn("static only: device check skipped", result.stdout)
        self.assertEqual(self.cache_cmd("show", "ffffffffff").returncode, 2)
        self.assertEqual(self.cache_cmd("verify").returncode, 0)
        # a wheel changed after publishing is caught, by name
        victim = pathlib.Path(listing[0]["dir"]) / "wheels" / listing[0]["wheels"][0]
        original = victim.read_bytes()
        victim.write_bytes(original + b"x")
        result = self.cache_cmd("verify")
        self.assertEqual(result.returncode, 1)
        self.assertIn(listing[0]["wheels"][0] + ": sha256 differs from the manifest's", result.stdout)
        victim.write_bytes(original)
        # gc keeps the newest per project and arch list: the v1.0 build of 9.0 goes
        result = self.cache_cmd("gc", "--keep", "1", "--dry-run")
        self.assertIn("would remove " + listing[2]["key"][:12], result.stdout)
        self.assertEqual(len(json.loads(self.cache_cmd("ls", "--json").stdout)["entries"]), 3)
        result = self.cache_cmd("gc", "--keep", "1", "--json")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual([e["key"] for e in json.loads(result.stdout)["removed"]], [listing[2]["key"]])
        left = json.loads(self.cache_cmd("ls", "--json").stdout)["entries"]
        self.assertEqual([e["key"] for e in left], [listing[0]["key"], listing[1]["key"]])
        self.assertEqual(self.cache_cmd("verify").returncode, 0)
        self.assertEqual(self.cache_cmd("gc", "--keep", "0").returncode, 2)

    def test_eight_concurrent_publishes_leave_a_consistent_index(self):
        # 4 of the same key (one builds, three reuse it) and 4 different keys
        # on another work tree, all at once
        cells = [("9.0", "v1.0")] * 4 + [("7.5", "v1.1"), ("8.0", "v1.1"), ("8.6", "v1.1"), ("9.0", "v1.1")]
        with ThreadPoolExecutor(len(cells)) as pool:
            results = list(pool.map(lambda cell: self.build(cell[0], "--ref", cell[1], "--jobs", "1"), cells))
        for result in results:
            self.assertEqual(result.returncode, 0, result.stderr)
        reports = [json.loads(result.stdout) for result in results]
        same = reports[:4]
        self.assertEqual(len({r["key"] for r in same}), 1)
        self.assertEqual(sorted(r["cache_hit"] for r in same), [False, True, True, True])
        self.assertEqual(len({r["key"] for r in reports}), 5)
        entries = json.loads(self.cache_cmd("ls", "--json").stdout)["entries"]
        self.assertEqual(len(entries), 5)
        result = self.cache_cmd("verify", "--json")
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertEqual(json.loads(result.stdout)["unfinished_publishes"], [])
        page = (self.cache / "simple" / "fixture" / "index.html").read_text()
        # two keys share the sm90 file name: the newest is listed; each arch set's variant wheel, and their document
        self.assertEqual(page.count("%2Bcu130."), 4)
        self.assertEqual(len(set(re.findall(r"fixture-1\.0-py3-none-linux_x86_64-[0-9a-f]{8}\.whl", page))), 4)
        self.assertEqual(page.count("fixture-1.0-variants.json#sha256="), 1)
        self.assertEqual(sorted(p.name for p in (self.cache / "wheels").iterdir() if "+" in p.name),
                         sorted(f"fixture-1.0+cu130.sm{a}-py3-none-linux_x86_64.whl" for a in ("75", "80", "86", "90")))
        venv = self.venv()
        result = self.pip_install(venv, "--index-url", f"file://{self.cache}/simple", "fixture==1.0+cu130.sm86")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(self.installed_archs(venv), ["sm_86"])

    def test_a_publish_killed_halfway_leaves_no_entry(self):
        env = dict(os.environ, NO_COLOR="1", ARCHBUILD_DATA_DIR=str(self.data), ARCHBUILD_PUBLISH_PAUSE_MS="60000")
        env.pop("ARCHBUILD_FAKE_GPUS", None)
        process = subprocess.Popen([BIN, "build", "fixture", "--arch", "9.0", "--cache-dir", str(self.cache)],
                                   stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env)
        deadline = time.monotonic() + 300
        for line in process.stderr:
            if "pausing" in line or time.monotonic() > deadline:
                break
        process.send_signal(signal.SIGKILL)
        process.wait()
        process.stderr.close()
        store = self.cache / "store"
        self.assertEqual([p for p in store.glob("*/key.txt") if not p.parent.name.startswith(".")], [])
        self.assertEqual(len(list(store.glob(".tmp-*"))), 1)
        self.assertFalse((self.cache / "simple" / "fixture").exists())
        listing = json.loads(self.cache_cmd("ls", "--json").stdout)["entries"]
        self.assertEqual(listing, [])
        result = self.cache_cmd("verify")
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertIn("unfinished publish", result.stdout)
        result = self.cache_cmd("gc")
        self.assertIn("removed unfinished publish", result.stdout)
        self.assertEqual(list(store.glob(".tmp-*")), [])
        # the next build is not blocked by the killed one's lock, and publishes
        result = self.build("9.0")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue(json.loads(result.stdout)["published"])
        self.assertEqual(self.cache_cmd("verify").returncode, 0)


if __name__ == "__main__":
    unittest.main()
