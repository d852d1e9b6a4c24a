"""Hostile inputs of the small kind: files that are not regular files (a
FIFO would block a read forever, /dev/zero never ends), numbers out of
range, refs that are no refs, a cache that is not there. Each is refused at
once with exit 2, naming what is wrong, and creates nothing."""
import os
import shutil
import time
import unittest

from gitrepos import make_repo
from harness import SOURCE_DIR, run, scratch_dir

QUICK = 20  # seconds: a refusal never waits on the input


class NotRegularFiles(unittest.TestCase):
    def setUp(self):
        self.dir = scratch_dir(self)
        self.fifo = self.dir / "fifo"
        os.mkfifo(self.fifo)

    def test_config_file_that_is_a_fifo_or_a_directory(self):
        for config in (self.fifo, self.dir):
            with self.subTest(config=config):
                result = run("config", env={"ARCHBUILD_CONFIG": str(config)}, timeout=QUICK)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn(f"{config} is not a regular file", result.stderr)

    def test_inspect_of_a_fifo_or_a_device(self):
        for path in (self.fifo, "/dev/zero"):
            with self.subTest(path=path):
                result = run("inspect", str(path), timeout=QUICK)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn("is not a regular file or a directory", result.stderr)

    def test_cache_why_of_a_fifo_or_a_device(self):
        for path in (self.fifo, "/dev/zero"):
            with self.subTest(path=path):
                result = run("cache", "why", str(path), str(path), timeout=QUICK)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn("is not a regular file", result.stderr)


class OutOfRange(unittest.TestCase):
    def setUp(self):
        self.dir = scratch_dir(self)

    def test_gc_keep_must_be_a_small_positive_number(self):
        for keep in ("-1", "18446744073709551615", "0"):
            with self.subTest(keep=keep):
                result = run("cache", "gc", "--keep", keep, "--cache-dir", str(self.dir), timeout=QUICK)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn("--keep", result.stderr)

    def test_recipe_job_memory_must_be_finite(self):
        base = (SOURCE_DIR / "recipes" / "torch.toml").read_text()
        for value in ("nan", "inf", "-inf"):
            with self.subTest(value=value):
                data = self.dir / f"data-{value}"
                for name in ("recipes", "patches", "toolchains"):
                    shutil.copytree(SOURCE_DIR / name, data / name)
                (data / "recipes" / "torch.toml").write_text(base.replace("job_memory_gb = 4.5", f"job_memory_gb = {value}"))
                result = run("recipes", env={"ARCHBUILD_DATA_DIR": str(data)}, timeout=QUICK)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn("job_memory_gb", result.stderr)

    def test_verify_of_a_missing_cache_creates_nothing(self):
        missing = self.dir / "no-such-cache"
        result = run("cache", "verify", "--cache-dir", str(missing), timeout=QUICK)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn(str(missing), result.stderr)
        self.assertFalse(missing.exists())

    def test_a_malformed_ref_is_bad_input_at_once(self):
        repo = make_repo(self.dir / "repo", {"README": "x\n"})
        for ref in ("../../etc", "a..b", "-rf", "bad ref"):
            with self.subTest(ref=ref):
                start = time.monotonic()
                result = run("source", str(repo), "--ref", ref, "--cache-dir", str(self.dir / "cache"), timeout=QUICK)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn("is not a valid git ref name", result.stderr)
                self.assertLess(time.monotonic() - start, 5)  # no fetch, no retries
        self.assertFalse((self.dir / "cache" / "worktrees").exists())


if __name__ == "__main__":
    unittest.main()
