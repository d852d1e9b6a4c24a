"""recipes/frontends/pep517_wheel.py, the frontend the extension recipes run
instead of `pip wheel`: one build_wheel call of the project's own backend
(setuptools' legacy backend without [build-system], an in-tree backend via
backend-path), a wheel real pip installs, and clear failures."""
import os
import subprocess
import sys
import textwrap
import unittest
import zipfile

from harness import SOURCE_DIR, pip_target, scratch_dir

FRONTEND = SOURCE_DIR / "recipes" / "frontends" / "pep517_wheel.py"


def frontend(source, wheel_dir):
    # setuptools 65 (Debian's) needs the `wheel` package for bdist_wheel, as under `pip wheel`
    wheel_package = pip_target("wheel-0.45.1", ["wheel==0.45.1"])
    return subprocess.run([sys.executable, str(FRONTEND), str(source), str(wheel_dir)], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, PYTHONPATH=str(wheel_package)))


class Pep517Frontend(unittest.TestCase):
    def setUp(self):
        self.root = scratch_dir(self)

    def project(self, name, files):
        source = self.root / name
        for path, text in files.items():
            (source / path).parent.mkdir(parents=True, exist_ok=True)
            (source / path).write_text(textwrap.dedent(text))
        return source

    def test_legacy_setup_py_builds_a_wheel_pip_installs(self):
        source = self.project("legacy", {
            "setup.py": """\
                from setuptools import setup
                setup(name="legacy_demo", version="1.2", py_modules=["legacy_demo"])
            """,
            "legacy_demo.py": "ANSWER = 42\n"})
        result = frontend(source, self.root / "wheels")
        self.assertEqual(result.returncode, 0, result.stderr[-3000:])
        self.assertIn("setuptools.build_meta:__legacy__.build_wheel", result.stdout)
        (wheel,) = (self.root / "wheels").glob("*.whl")
        self.assertTrue(wheel.name.startswith("legacy_demo-1.2-"), wheel.name)
        with zipfile.ZipFile(wheel) as archive:
            self.assertIn("legacy_demo.py", archive.namelist())
        target = self.root / "installed"
        pip = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--target", str(target),
                              str(wheel)], capture_output=True, text=True)
        self.assertEqual(pip.returncode, 0, pip.stderr)
        self.assertEqual((target / "legacy_demo.py").read_text(), "ANSWER = 42\n")

    def test_in_tree_backend_from_backend_path(self):
        source = self.project("intree", {
            "pyproject.toml": """\
                [build-system]
                requires = []
                build-backend = "backend:hooks"
                backend-path = ["_build"]
            """,
            "_build/backend.py": """\
                import pathlib
                class hooks:
                    @staticmethod
                    def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
                        name = "intree-0.1-py3-none-any.whl"
                        pathlib.Path(wheel_directory, name).write_bytes(b"not really a zip")
                        return name
            """})
        result = frontend(source, self.root / "out")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue((self.root / "out" / "intree-0.1-py3-none-any.whl").exists())

    def test_failures_name_what_is_wrong(self):
        missing = frontend(self.root / "nope", self.root / "out")
        self.assertNotEqual(missing.returncode, 0)
        self.assertIn("no such source dir", missing.stderr)
        source = self.project("badbackend", {"pyproject.toml": '[build-system]\nbuild-backend = "no_such_backend_mod"\n'})
        bad = frontend(source, self.root / "out")
        self.assertNotEqual(bad.returncode, 0)
        self.assertIn("cannot import the build backend 'no_such_backend_mod'", bad.stderr)
        source = self.project("broken", {"setup.py": "raise SystemExit('setup.py says no')\n"})
        broken = frontend(source, self.root / "out")
        self.assertNotEqual(broken.returncode, 0)
        self.assertIn("setup.py says no", broken.stderr)


if __name__ == "__main__":
    unittest.main()
