"""A build's Python requirements (a recipe's `requires`, a requirements file of
the work tree) are installed by real pip into a build venv before the build
step, which runs offline; --offline refuses to install and names them; the
installed versions are part of the cache key."""
import json
import unittest

from fixture_project import data_dir_with_recipe, make_cuda_project
from gitrepos import commit_files, git
from harness import SYSTEM_NVCC, pure_wheel, run, scratch_dir


@unittest.skipUnless(SYSTEM_NVCC.exists(), "needs nvcc 13 at /usr/local/cuda")
class BuildRequirements(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = scratch_dir(cls)
        cls.index = cls.dir / "index"
        cls.index.mkdir()
        for version in ("1.0", "2.0"):
            pure_wheel(cls.index, "archbuild-probe-helper", version)
        pure_wheel(cls.index, "archbuild-probe-extra", "0.5")
        # libraries as the nvidia-* wheels ship them: a header, and only a versioned .so
        for library, version in (("fakelib", "1.5"), ("fakeother", "3.0")):
            pure_wheel(cls.index, f"nvidia-{library}-cu13", version,
                       {f"nvidia/{library}/include/{library}.h": "#pragma once\n",
                        f"nvidia/{library}/lib/lib{library}.so.1": "not really ELF\n"})
        cls.project = make_cuda_project(cls.dir)
        # the tree names one more, as PyTorch's requirements-build.txt does
        commit_files(cls.project, {"requirements-build.txt": "# build tools\narchbuild-probe-extra>=0.5\n"
                                   "-r more.txt\n\n"}, "requirements-build.txt")
        git(cls.project, "tag", "-f", "v1.0")
        cls.data = data_dir_with_recipe(cls.dir, cls.project)
        recipe = cls.data / "recipes" / "fixture.toml"
        text = recipe.read_text()
        command = next(line for line in text.splitlines() if line.startswith("command = "))
        recipe.write_text(text.replace(command, command + '\nrequires = ["archbuild-probe-helper>=2.0", '
                                       '"archbuild-probe-never; python_version < \'3\'"]\n'
                                       'requires_from = ["requirements-build.txt", "missing.txt"]') +
                          "".join(f'''
[[system_library]]
name = "{name.upper()}"
header = "{name}.h"
library = "lib{name}.so"
found_env = {{ {name.upper()}_LIB_DIR = "{{library_dir}}", {name.upper()}_INCLUDE_DIR = "{{include_dir}}" }}
wheel = "nvidia-{name}-cu{{cuda_major}}"
wheel_dir = "nvidia/{name}"
wheel_env = {{ EXTRA_REQUIREMENTS = "{{requirement}}" }}
''' for name in ("fakelib", "fakeother")))
        cls.cache = cls.dir / "cache"
        # real pip, from a local index standing in for PyPI
        cls.env = {"ARCHBUILD_DATA_DIR": str(cls.data), "ARCHBUILD_FAKE_GPUS": None, "PIP_NO_INDEX": "1",
                   "PIP_FIND_LINKS": str(cls.index), "PIP_NO_CACHE_DIR": "1"}

    def build(self, *args):
        return run("build", "fixture", "--arch", "8.0", "--cache-dir", str(self.cache), "--out",
                   str(self.dir / "out"), "--no-validate", *args, env=self.env)

    def test_installed_before_the_offline_build_and_keyed(self):
        offline = self.build("--offline")
        self.assertEqual(offline.returncode, 3, offline.stderr)
        self.assertIn("the build needs archbuild-probe-helper>=2.0, archbuild-probe-extra>=0.5, nvidia-fakelib-cu13, "
                      "nvidia-fakeother-cu13,", offline.stderr)
        self.assertIn("-m pip install 'archbuild-probe-helper>=2.0' 'archbuild-probe-extra>=0.5' nvidia-fakelib-cu13 "
                      "nvidia-fakeother-cu13)", offline.stderr)
        self.assertNotIn("archbuild-probe-never", offline.stderr)  # its marker does not apply here
        self.assertFalse((self.dir / "out" / "wheels").exists() and any((self.dir / "out" / "wheels").iterdir()))

        built = self.build()
        self.assertEqual(built.returncode, 0, built.stderr)
        self.assertIn("requirements-build.txt:3: '-r more.txt' is a pip option, not followed", built.stderr)
        self.assertIn("missing.txt: not in this ref's tree", built.stderr)
        self.assertIn("build requirements: archbuild-probe-helper 2.0, archbuild-probe-extra 0.5, nvidia-fakelib-cu13 "
                      "1.5, nvidia-fakeother-cu13 3.0 (installed archbuild-probe-helper>=2.0, archbuild-probe-extra>=0.5, "
                      "nvidia-fakelib-cu13, nvidia-fakeother-cu13 into ", built.stderr)
        report = json.loads((self.dir / "out" / "report.json").read_text())
        venv_python = self.dir / "out" / "build-requirements" / "bin" / "python"
        self.assertEqual(report["plan"]["python"], str(venv_python))
        # pip's cmake and ninja before the machine's; only the launcher toolkit's bin/ (nvcc) comes first
        path = report["plan"]["env"]["PATH"].split(":")
        self.assertEqual(path[:2], [report["plan"]["env"]["CUDA_HOME"] + "/bin", str(venv_python.parent)], path)
        # the libraries the machine lacks, from their wheels: linked unversioned, named as requirements
        env = report["plan"]["env"]
        links = self.dir / "out" / "library-links" / "FAKELIB"
        self.assertEqual(env["FAKELIB_LIB_DIR"], str(links))
        self.assertTrue(env["FAKELIB_INCLUDE_DIR"].endswith("site-packages/nvidia/fakelib/include"), env)
        self.assertTrue((links / "libfakelib.so").is_symlink())
        self.assertEqual((links / "libfakelib.so").read_text(), "not really ELF\n")
        self.assertTrue(str((links / "libfakelib.so").resolve()).endswith("nvidia/fakelib/lib/libfakelib.so.1"))
        self.assertEqual(env["EXTRA_REQUIREMENTS"], "nvidia-fakelib-cu13==1.5 | nvidia-fakeother-cu13==3.0")
        self.assertIn(f"FAKELIB: {env['FAKELIB_INCLUDE_DIR']}, {links} (from the wheel nvidia-fakelib-cu13==1.5)",
                      report["plan"]["libraries"])
        key = (self.dir / "out" / "key.txt").read_text()
        self.assertIn("build.requires.archbuild-probe-helper 2.0\n", key)
        self.assertIn("build.requires.archbuild-probe-extra 0.5\n", key)
        # the build's interpreter imports them; the one archbuild was given does not
        probe = "import archbuild_probe_helper as h; print(h.VERSION)"
        import subprocess
        self.assertEqual(subprocess.run([str(venv_python), "-c", probe], capture_output=True, text=True).stdout, "2.0\n")
        self.assertNotEqual(subprocess.run(["python3", "-c", probe], capture_output=True).returncode, 0)

        # the plan says what the interpreter has, and installs nothing
        plan = run("plan", "fixture", "--arch", "8.0", "--cache-dir", str(self.cache), env=self.env)
        self.assertIn("# requires: archbuild-probe-helper>=2.0: missing, installed into a build venv before the "
                      "build step", plan.stdout)
        self.assertIn("# requires: archbuild-probe-never; python_version < '3': not for this machine", plan.stdout)
        self.assertIn("# library: FAKELIB: not found on this machine (fakelib.h, libfakelib.so): the build installs "
                      "nvidia-fakelib-cu13 before the build step", plan.stdout)

        # the same list again: the venv is reused, nothing installed
        again = self.build("--rebuild")
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertIn("build requirements: archbuild-probe-helper 2.0, archbuild-probe-extra 0.5, nvidia-fakelib-cu13 "
                      "1.5, nvidia-fakeother-cu13 3.0\n", again.stderr)
        # and offline too: the venv already holds them
        offline_again = self.build("--rebuild", "--offline")
        self.assertEqual(offline_again.returncode, 0, offline_again.stderr)

    def build_requiring(self, requirement):
        """A build whose recipe asks `requirement` instead of archbuild-probe-helper (restored after the test)."""
        recipe = self.data / "recipes" / "fixture.toml"
        saved = recipe.read_text()
        self.addCleanup(recipe.write_text, saved)
        recipe.write_text(saved.replace('"archbuild-probe-helper>=2.0"', f'"{requirement}"'))
        return self.build()

    def test_a_malformed_requirement_is_named(self):
        result = self.build_requiring("archbuild probe >= 2")
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("build requirements: not a requirement (PEP 508): 'archbuild probe >= 2'", result.stderr)

    def test_a_requirement_no_index_has_says_how_to_give_it(self):
        result = self.build_requiring("archbuild-probe-nowhere>=1")
        self.assertEqual(result.returncode, 3, result.stderr)
        self.assertIn("No matching distribution found for archbuild-probe-nowhere>=1", result.stderr)
        self.assertIn("without an index: put their wheels in a directory and set PIP_FIND_LINKS=DIR PIP_NO_INDEX=1",
                      result.stderr)


if __name__ == "__main__":
    unittest.main()
