"""The ready-to-use nightly CI files in ci/: the GitHub Actions workflow is
valid by the GitHub workflow schema (check-jsonschema from PyPI, its vendored
schema, offline), a broken copy is not, and the matrix file parses into the
cells the workflow runs."""
import subprocess
import sys
import unittest

from harness import SOURCE_DIR, pip_target, run, scratch_dir


class CiFiles(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.linter = pip_target("check-jsonschema", ["check-jsonschema==0.39.0"])

    def lint(self, path):
        env = {"PYTHONPATH": str(self.linter), "PATH": "/usr/bin:/bin"}
        return subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows",
                               str(path)], capture_output=True, text=True, env=env)

    def test_workflow_is_valid(self):
        result = self.lint(SOURCE_DIR / "ci" / "github-nightly.yml")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        broken = scratch_dir(self) / "broken.yml"
        broken.write_text((SOURCE_DIR / "ci" / "github-nightly.yml").read_text().replace("runs-on:", "runz-on:"))
        result = self.lint(broken)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("'runs-on' is a required property", result.stdout + result.stderr)

    def test_matrix_file_parses(self):
        result = run("matrix", str(SOURCE_DIR / "ci" / "nightly.toml"), "--dry-run")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("torchvision v0.24.1 9.0 (CUDA 13.0)  (after torch v2.9.1 9.0 (CUDA 13.0))", result.stdout)
        self.assertIn("9 cells", result.stdout)


if __name__ == "__main__":
    unittest.main()
