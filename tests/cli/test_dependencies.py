"""A recipe that depends on another (as torchvision depends on torch) builds
against the cache's wheel of that recipe for the same arch list, building it
first when the cache has none. Here: a `consumer` project whose setup.py
imports the fixture package from its build environment and ships a copy of
the fixture's CUDA library."""
import json
import shutil
import subprocess
import sys
import unittest
import zipfile

from fixture_project import add_consumer_recipe, data_dir_with_recipe, make_cuda_project
from harness import SYSTEM_NVCC, run, scratch_dir, torch_build_python



@unittest.skipUnless(SYSTEM_NVCC.exists(), "needs nvcc 13 at /usr/local/cuda")
class Dependencies(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = scratch_dir(cls)
        cls.fixture = make_cuda_project(cls.root)
        cls.data = data_dir_with_recipe(cls.root, cls.fixture)
        add_consumer_recipe(cls.root, cls.data)
        cls.cache = cls.root / "cache"
        cls.env = {"ARCHBUILD_DATA_DIR": str(cls.data), "ARCHBUILD_FAKE_GPUS": None}

    def build(self, recipe, arch, *args):
        return run(recipe, "--arch", arch, "--cache-dir", str(self.cache), *args, env=self.env)

    def test_the_dependency_is_built_first_then_reused(self):
        result = self.build("consumer", "8.0")
        self.assertEqual(result.returncode, 0, result.stderr[-3000:])
        self.assertIn("no fixture 1.0 wheel for 8.0 in the cache: building it first", result.stderr)
        self.assertIn("deps        fixture-1.0+cu130.sm80-py3-none-linux_x86_64.whl in", result.stderr)
        report = json.loads((self.cache / "builds" / "consumer-v1.0" / "report.json").read_text())
        self.assertRegex(report["plan"]["key_inputs"]["dep.fixture"],
                         r"^fixture-1\.0\+cu130\.sm80-py3-none-linux_x86_64\.whl sha256 [0-9a-f]{64}$")
        self.assertTrue(report["published"])
        self.assertIn("build-env", report["plan"]["python"])
        entries = json.loads(run("cache", "ls", "--json", "--cache-dir", str(self.cache), env=self.env).stdout)["entries"]
        self.assertEqual(sorted(e["recipe"] for e in entries), ["consumer", "fixture"])
        # again: a cache hit, nothing rebuilt
        again = self.build("consumer", "8.0", "--json")
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertTrue(json.loads(again.stdout)["cache_hit"])
        self.assertNotIn("building it first", again.stderr)
        # a fixture already in the cache for 9.0 is used as it is
        self.assertEqual(self.build("fixture", "9.0").returncode, 0)
        other = self.build("consumer", "9.0")
        self.assertEqual(other.returncode, 0, other.stderr[-3000:])
        self.assertNotIn("building it first", other.stderr)
        self.assertIn("fixture-1.0+cu130.sm90-py3-none-linux_x86_64.whl", other.stderr)

    def test_without_arch_an_extension_takes_its_dependencys_list(self):
        # every wheel carries .dist-info/archbuild.json: its arch list, toolkit and key
        cache = self.root / "cache-inherit"
        common = ["--cache-dir", str(cache), "--json"]
        result = run("fixture", "--arch", "8.6", *common, env=self.env)
        self.assertEqual(result.returncode, 0, result.stderr[-3000:])
        fixture_86 = shutil.copy(json.loads(result.stdout)["wheels"][0]["path"], self.root)  # the build dir is reused
        with zipfile.ZipFile(fixture_86) as archive:
            record = json.loads(archive.read("fixture-1.0+cu130.sm86.dist-info/archbuild.json"))
        self.assertEqual((record["recipe"], record["arch_list"], record["targets"], record["version"]),
                         ("fixture", "8.6", "8.6", "1.0+cu130.sm86"))
        self.assertEqual(record["key"], json.loads(result.stdout)["key"])
        self.assertEqual(record["key_inputs"]["arch_list"], "8.6")
        self.assertEqual(run("inspect", fixture_86, env=self.env).returncode, 0)
        # the cache's only fixture gives the list
        result = run("consumer", "--cache-dir", str(cache), env=self.env)
        self.assertEqual(result.returncode, 0, result.stderr[-3000:])
        self.assertIn("archs       8.6 (CUDA 13.0", result.stderr)
        self.assertIn("the arch list of fixture 1.0+cu130.sm86 (the cache's only fixture); --arch picks another",
                      result.stderr)
        self.assertIn("consumer-1.0+cu130.sm86-", result.stderr)
        # two lists in the cache: which one is not guessed
        self.assertEqual(run("fixture", "--arch", "9.0", *common, env=self.env).returncode, 0)
        result = run("consumer", "--cache-dir", str(cache), env=self.env)
        self.assertEqual(result.returncode, 2, result.stderr[-3000:])
        self.assertIn("the cache holds fixture for several arch lists: 8.6 (1.0+cu130.sm86), 9.0 (1.0+cu130.sm90); "
                      "pass --arch to pick one", result.stderr)
        # an installed copy (real pip) keeps the record: a venv that also sees torch's
        venv = self.root / "venv-inherit"
        subprocess.run([str(torch_build_python()), "-m", "venv", str(venv)], check=True)
        (site,) = venv.glob("lib/python3*/site-packages")
        (torch_site,) = torch_build_python().parent.parent.glob("lib/python3*/site-packages")
        (site / "torch-venv.pth").write_text(f"{torch_site}\n")
        subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
                        fixture_86], check=True)
        result = run("consumer", "--use-installed-torch", "--python", str(venv / "bin" / "python"), "--out",
                     str(self.root / "out-installed"), "--cache-dir", str(cache), env=self.env)
        self.assertEqual(result.returncode, 0, result.stderr[-3000:])
        self.assertIn(f"the arch list of fixture 1.0+cu130.sm86 (installed for {venv}/bin/python)", result.stderr)
        # a recipe that builds against nothing still needs --arch
        result = run("fixture", "--cache-dir", str(cache), env=self.env)
        self.assertEqual(result.returncode, 2)
        self.assertIn("--arch is required: recipe fixture builds against no torch", result.stderr)

    def test_a_companion_pairs_with_its_version_of_the_dependency(self):
        cache = self.root / "cache-pairs"
        result = run("consumer", "--arch", "8.0", "--cache-dir", str(cache), "--json", env=self.env)
        self.assertEqual(result.returncode, 0, result.stderr[-3000:])
        report = json.loads(result.stdout)
        with zipfile.ZipFile(report["wheels"][0]["path"]) as archive:
            metadata = archive.read("consumer-1.0+cu130.sm80.dist-info/METADATA").decode()
        self.assertIn("Requires-Dist: fixture==1.0\n", metadata)  # {version:fixture}: the version built against
        # the install lines pin the dependency built against too: no other arch set of it is picked
        index = (cache / "simple").as_uri()
        self.assertEqual(report["install"][0],
                         f"pip install consumer==1.0+cu130.sm80 fixture==1.0+cu130.sm80 --extra-index-url {index}")
        self.assertEqual(report["plan"]["key_inputs"]["build.env.FIXTURE_VERSION"], "1.0")
        # a dependency of another version is refused, naming both
        fixture = next((cache / "store").rglob("fixture-1.0+cu130.sm80-*.whl"))
        other = shutil.copy(fixture, self.root / fixture.name.replace("fixture-1.0", "fixture-2.0"))
        result = run("consumer", "--arch", "8.0", "--cache-dir", str(cache), "--torch-wheel", other, env=self.env)
        self.assertEqual(result.returncode, 2, result.stderr[-3000:])
        self.assertIn("consumer v1.0 pairs with fixture 1.0", result.stderr)
        self.assertIn("is fixture 2.0+cu130.sm80: give a fixture 1.0, or --ref a consumer that pairs with 2.0",
                      result.stderr)
        # real pip, the cache's index only: the pinned companion brings its own dependency
        target = self.root / "pip-pairs"
        pip = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--target", str(target),
                              "--index-url", (cache / "simple").as_uri(), "consumer==1.0"],
                             capture_output=True, text=True)
        self.assertEqual(pip.returncode, 0, pip.stderr[-2000:])
        installed = sorted(p.name for p in target.glob("*.dist-info"))
        self.assertEqual(installed, ["consumer-1.0+cu130.sm80.dist-info", "fixture-1.0+cu130.sm80.dist-info"])

    def test_a_failing_dependency_build_says_why_and_the_way_out(self):
        # the dependency's repository cannot be reached (as PyTorch's on an offline machine)
        result = run("consumer", "--arch", "8.6", "--cache-dir", str(self.root / "cache-unreachable"),
                     "--mirror", f"file://{self.fixture}=file://{self.root}/nowhere", env=self.env)
        self.assertEqual(result.returncode, 3, result.stderr[-3000:])
        self.assertIn("no fixture 1.0 wheel for 8.6 in the cache: building it first", result.stderr)
        self.assertRegex(result.stderr, r"error: building the dependency fixture \(no fixture 1\.0 wheel for 8\.6 in the "
                                        r"cache\): .*nowhere.*; fix that build, or build against an existing torch "
                                        r"with --torch-wheel FILE or --use-installed-torch")

    def test_with_the_installed_torch_another_dependency_comes_from_the_cache(self):
        # as pytorch-sparse imports torch_scatter: the interpreter has torch but not the
        # other dependency, which is built first and put in a venv over the interpreter
        recipe = (self.data / "recipes" / "consumer.toml").read_text()
        recipe = recipe.replace('name = "consumer"', 'name = "torch-consumer"')
        recipe = recipe.replace('depends_on = ["fixture"]', 'depends_on = ["torch", "fixture"]')
        (self.data / "recipes" / "torch-consumer.toml").write_text(recipe[:recipe.index("# as torchvision")])
        cache = self.root / "cache-installed"
        python = str(torch_build_python())
        result = run("torch-consumer", "--arch", "8.0", "--cache-dir", str(cache), "--use-installed-torch",
                     "--python", python, "--json", env=self.env)
        self.assertEqual(result.returncode, 0, result.stderr[-3000:])
        report = json.loads(result.stdout)
        keys = report["plan"]["key_inputs"]
        self.assertTrue(keys["dep.torch"].startswith("torch 2.11.0+cu130 (CUDA 13.0) installed in " + python), keys)
        self.assertRegex(keys["dep.fixture"], r"^fixture-1\.0\+cu130\.sm80-py3-none-linux_x86_64\.whl sha256 [0-9a-f]{64}$")
        self.assertIn("build-env", report["plan"]["python"])
        self.assertEqual(report["plan"]["env"]["FIXTURE_VERSION"], "1.0")  # {version:fixture}, from its wheel
        # the build saw the fixture from the venv and torch from the interpreter behind it
        seen = subprocess.run([report["plan"]["python"], "-c", "import fixture, torch; print(torch.__version__)"],
                              capture_output=True, text=True)
        self.assertEqual(seen.stdout.strip(), "2.11.0+cu130", seen.stderr)
        # the fixture was built without torch options (it depends on nothing)
        entries = json.loads(run("cache", "ls", "--json", "--cache-dir", str(cache), env=self.env).stdout)["entries"]
        self.assertEqual(sorted(e["recipe"] for e in entries), ["fixture", "torch-consumer"])

    def test_torch_options_do_not_apply_without_dependencies(self):
        result = self.build("fixture", "8.0", "--use-installed-torch")
        self.assertEqual(result.returncode, 2)
        self.assertIn("depends on nothing", result.stderr)


if __name__ == "__main__":
    unittest.main()
