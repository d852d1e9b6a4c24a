"""Hostile inputs of the small kind: files that are not regular files (a
FIFO would block a read forever, /dev/zero never ends), numbers out of
range, refs that are no refs, a cache that is not there. Each is refused at
once with exit 2, naming what is wrong, and creates nothing."""
import json
import os
import shutil
import signal
import subprocess
import time
import unittest

from gitrepos import make_repo
from harness import BIN, SOURCE_DIR, SYSTEM_NVCC, nvcc, processes_mentioning, run, scratch_dir
from waiting import scaled, wait_gone
from test_validate import KERNEL, make_wheel

# seconds: a refusal never waits on the input (which would block for ever);
# generous for a busy machine, scaled by ARCHBUILD_TEST_TIMEOUT_SCALE
QUICK = scaled(60)


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

    def test_options_that_name_the_wrong_kind_of_thing(self):
        afile = self.dir / "afile"
        afile.write_text("x")
        result = run("check", "--arch", "9.0", "--build-dir", str(afile), timeout=QUICK)
        self.assertEqual(result.returncode, 2, result.stdout + result.stderr)
        self.assertIn(f"--build-dir {afile} is not a directory", result.stderr)
        for timeout in ("nan", "inf", "-nan"):
            with self.subTest(timeout=timeout):
                result = run("validate", str(afile), "--test-timeout", timeout, timeout=QUICK)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn("--test-timeout", result.stderr)
        result = run("validate", str(afile), "--arch", "9.0", "--python", str(self.dir), timeout=QUICK)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("is a directory, not an interpreter", result.stderr)

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

    def test_recipes_that_depend_on_each_other_are_refused(self):
        base = (SOURCE_DIR / "recipes" / "torch.toml").read_text()
        for depends, cycle in (('["torch"]', "torch -> torch"), ('["torchvision"]', "torch -> torchvision -> torch")):
            with self.subTest(depends=depends):
                data = self.dir / f"cycle-{len(cycle)}"
                for name in ("recipes", "patches", "toolchains"):
                    shutil.copytree(SOURCE_DIR / name, data / name)
                (data / "recipes" / "torch.toml").write_text(base.replace("depends_on = []", f"depends_on = {depends}", 1))
                env = {"ARCHBUILD_DATA_DIR": str(data)}
                result = run("recipes", env=env, timeout=QUICK)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn(cycle, result.stderr)
                # a build does not wait on itself: it is refused before anything starts
                result = run("build", "torch", "--arch", "9.0", "--cache-dir", str(self.dir / "cache"), env=env,
                             timeout=QUICK)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn("cycle", result.stderr)

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
                result = run("source", str(repo), "--ref", ref, "--cache-dir", str(self.dir / "cache"), timeout=QUICK)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn("is not a valid git ref name", result.stderr)
                # no fetch (and so no retries): no mirror of the repository was made
                self.assertEqual(list((self.dir / "cache" / "mirrors").glob("*")), [])
        self.assertFalse((self.dir / "cache" / "worktrees").exists())


class PathsAndNames(unittest.TestCase):
    def setUp(self):
        self.dir = scratch_dir(self)
        self.repo = make_repo(self.dir / "repo", {"README": "x\n"})

    def test_a_cache_dir_that_is_a_file_is_bad_input_naming_it(self):
        not_a_dir = self.dir / "a-file"
        not_a_dir.write_text("mine\n")
        result = run("source", str(self.repo), "--ref", "main", "--cache-dir", str(not_a_dir), timeout=QUICK)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn(str(not_a_dir), result.stderr)
        self.assertNotIn("internal error", result.stderr)
        self.assertEqual(not_a_dir.read_text(), "mine\n")

    def test_an_interrupted_first_checkout_is_redone_not_refused(self):
        cache = self.dir / "cache"
        tree = cache / "worktrees" / "repo-main"
        # what a SIGKILL mid-checkout leaves: part of a tree, no manifest, the in-progress marker beside it
        (tree / ".git").mkdir(parents=True)
        (tree / "half-written.txt").write_text("partial\n")
        marker = cache / "worktrees" / "repo-main.archbuild-incomplete"
        marker.write_text("archbuild: first checkout in progress\n")
        result = run("source", str(self.repo), "--ref", "main", "--cache-dir", str(cache), "--json", timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual((tree / "README").read_text(), "x\n")
        self.assertFalse((tree / "half-written.txt").exists())
        self.assertFalse(marker.exists())
        # a directory someone else filled, with no marker, is still refused and kept
        other = self.dir / "someone-elses"
        other.mkdir()
        (other / "notes.txt").write_text("keep\n")
        result = run("source", str(self.repo), "--ref", "main", "--cache-dir", str(cache), "--dest", str(other),
                     timeout=60)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertEqual((other / "notes.txt").read_text(), "keep\n")

    @unittest.skipUnless(SYSTEM_NVCC.exists(), "needs nvcc 13 at /usr/local/cuda")
    def test_json_survives_file_names_that_are_not_utf8(self):
        source = self.dir / "k.cu"
        source.write_text("__global__ void k(float* x) { x[threadIdx.x] *= 2.f; }\n")
        folder = self.dir / "objects"
        folder.mkdir()
        name = os.fsencode(folder) + b"/bad\xffname.o"
        subprocess.run([str(SYSTEM_NVCC), "-c", str(source), "-o", os.fsdecode(name), "-arch=sm_90"], check=True)
        result = run("inspect", "--json", str(folder), timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        (entry,) = json.loads(result.stdout)["files"]
        self.assertIn("bad", entry["path"])
        self.assertIn("\ufffd", entry["path"])  # replaced, not an exception


class Interrupts(unittest.TestCase):
    def test_a_signal_stops_the_children_of_any_command(self):
        """Not only a build's: the interpreter `plan` asks for its tag, with a child of its own."""
        root = scratch_dir(self)
        repo = make_repo(root / "repo", {"setup.py": "\n"})
        python = root / "slow-python"
        (root / "sleepy").symlink_to(shutil.which("sleep"))  # its command line names the test's dir
        python.write_text(f"#!/bin/sh\n{root}/sleepy 300 &\nwait\necho cp311\n")
        python.chmod(0o755)
        process = subprocess.Popen([BIN, "plan", str(repo), "--arch", "9.0", "--python", str(python),
                                    "--cache-dir", str(root / "cache")],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + QUICK
        while not any("sleepy" in cmdline for _, cmdline in processes_mentioning(str(root))):
            self.assertLess(time.monotonic(), deadline, "the interpreter never started")
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=QUICK)
        self.assertEqual(process.returncode, 130, stderr)
        left = wait_gone(lambda: processes_mentioning(str(root)), "the interpreter and its child")
        self.assertEqual(left, [], "children outlived archbuild")


@unittest.skipUnless(SYSTEM_NVCC.exists(), "needs nvcc 13 at /usr/local/cuda")
class WheelsPipWouldRefuse(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = scratch_dir(cls)
        (cls.dir / "k.cu").write_text(KERNEL)
        nvcc("-shared", "-Xcompiler", "-fPIC", "-gencode", "arch=compute_90,code=sm_90", "-o", str(cls.dir / "lib.so"),
             str(cls.dir / "k.cu"))
        cls.library = (cls.dir / "lib.so").read_bytes()

    def refused(self, wheel, expected):
        result = run("validate", str(wheel), "--arch", "9.0", "--json", env={"ARCHBUILD_FAKE_GPUS": None}, timeout=60)
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertIn(expected, "\n".join(json.loads(result.stdout)["record"]["errors"]))

    def test_members_outside_the_install_location(self):
        for member in ("../../x.py", "/tmp/x.py", "demo/../../x.py"):
            with self.subTest(member=member):
                wheel = make_wheel(scratch_dir(self), {"demo/_C.so": self.library, member: b"owned = True\n"})
                self.refused(wheel, f"{member}: a member path outside the install location")

    def test_a_member_twice(self):
        wheel = make_wheel(scratch_dir(self), {"demo/_C.so": self.library})
        import warnings
        import zipfile
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # zipfile warns about the duplicate name, which is the point
            with zipfile.ZipFile(wheel, "a") as archive:
                archive.writestr("demo/_C.so", b"a second copy")
        self.refused(wheel, "demo/_C.so: in the wheel twice")

    def test_a_file_name_that_is_not_a_wheel_name(self):
        wheel = make_wheel(scratch_dir(self), {"demo/_C.so": self.library})
        renamed = wheel.with_name("demo.whl")
        wheel.rename(renamed)
        self.refused(renamed, "demo.whl: not a wheel file name")


if __name__ == "__main__":
    unittest.main()
