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
import zipfile

from gitrepos import git, make_repo
from harness import BIN, SOURCE_DIR, SYSTEM_NVCC, nvcc, processes_mentioning, pure_wheel, run, scratch_dir
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
        result = run("validate", str(pure_wheel(self.dir, "tiny", "1.0")), "--arch", "9.0", "--python", str(self.dir),
                     timeout=QUICK)
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


class ExitCodesOfBadInput(unittest.TestCase):
    """A value the user gave that no command would take is exit 2 before
    anything runs: settings `config` shows, options of remote pushes,
    matrix outputs, a device CC no GPU has."""

    def setUp(self):
        self.dir = scratch_dir(self)

    def test_config_shows_then_refuses_a_value_no_command_would_take(self):
        for name, value, says in (("ARCHBUILD_JOBS", "abc", "jobs = 'abc'"),
                                  ("ARCHBUILD_OFFLINE", "maybe", "offline"),
                                  ("ARCHBUILD_COMPILER_CACHE_REMOTE", "ftp://cache.example/x", "is not ccache remote"),
                                  ("ARCHBUILD_COMPILER_CACHE_REMOTE", "redis://127.0.0.1:6379|evil",
                                   "attribute 'evil'")):
            with self.subTest(name=name, value=value):
                result = run("config", env={name: value}, timeout=QUICK)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn(says, result.stderr)
                self.assertIn("cache_dir", result.stdout)  # the table first
        fine = run("config", env={"ARCHBUILD_COMPILER_CACHE_REMOTE": "redis://127.0.0.1:6379|read-only"},
                   timeout=QUICK)
        self.assertEqual(fine.returncode, 0, fine.stderr)

    def test_a_missing_python_the_user_named_is_bad_input(self):
        project = self.dir / "project"
        project.mkdir()
        (project / "setup.py").write_text("print('setup')\n")
        result = run("plan", str(project), "--arch", "9.0", "--python", str(self.dir / "missing-python"), "--cache-dir",
                     str(self.dir / "cache"), timeout=QUICK)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("missing-python", result.stderr)

    def test_a_ref_the_repository_lacks_and_a_cache_dir_nobody_can_make(self):
        repo = make_repo(self.dir / "repo", {"setup.py": "print('setup')\n"})
        git(repo, "tag", "v1.0")
        missing = run("plan", f"file://{repo}", "--ref", "v1.1", "--arch", "9.0", "--cache-dir",
                      str(self.dir / "cache"), timeout=QUICK)
        self.assertEqual(missing.returncode, 2, missing.stderr)
        self.assertIn("ref 'v1.1' is not a tag, branch or commit of", missing.stderr)
        self.assertIn("closest tags: v1.0", missing.stderr)
        there = run("plan", f"file://{repo}", "--ref", "v1.0", "--arch", "9.0", "--cache-dir",
                    str(self.dir / "cache"), timeout=QUICK)
        self.assertEqual(there.returncode, 0, there.stderr)
        # /proc takes no new directory: this machine's refusal (3), said as such
        proc = run("build", f"file://{repo}", "--ref", "v1.0", "--arch", "9.0", "--cache-dir", "/proc/archbuild-x",
                   timeout=QUICK)
        self.assertEqual(proc.returncode, 3, proc.stderr)
        self.assertIn("cannot create the cache dir /proc/archbuild-x (cache_dir from --cache-dir)", proc.stderr)
        # a plan writes nothing (it lists the remote's refs, fetches nothing): it needs no cache dir made
        plan = run("plan", f"file://{repo}", "--ref", "v1.0", "--arch", "9.0", "--cache-dir",
                   str(self.dir / "plan-cache"), timeout=QUICK)
        self.assertEqual(plan.returncode, 0, plan.stderr)
        self.assertFalse((self.dir / "plan-cache").exists())
        (self.dir / "afile").write_text("x")
        in_the_way = run("source", f"file://{repo}", "--cache-dir", str(self.dir / "afile" / "cache"), timeout=QUICK)
        self.assertEqual(in_the_way.returncode, 2, in_the_way.stderr)
        self.assertIn("afile is not a directory", in_the_way.stderr)

    def test_transfer_options_of_a_directory_push_are_refused(self):
        for option in (("--timeout", "5"), ("--retries", "2"), ("--lock-stale-after", "9")):
            with self.subTest(option=option[0]):
                result = run("cache", "push", str(self.dir / "shared"), *option, "--cache-dir",
                             str(self.dir / "cache"), timeout=QUICK)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn(f"{option[0]} is for s3://", result.stderr)
                self.assertFalse((self.dir / "shared").exists())

    def test_an_endpoint_port_out_of_range(self):
        result = run("cache", "push", "s3://bucket/prefix", "--cache-dir", str(self.dir / "cache"),
                     env={"AWS_ENDPOINT_URL": "http://127.0.0.1:99999", "AWS_ACCESS_KEY_ID": "a",
                          "AWS_SECRET_ACCESS_KEY": "b"}, timeout=QUICK)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("a port is a number from 1 to 65535", result.stderr)

    def test_validate_checks_what_it_was_given_before_the_machine(self):
        # no --arch: "native" on a machine without a GPU would be exit 3; a bad input is 2 first
        empty = self.dir / "empty-1.0-py3-none-any.whl"
        with zipfile.ZipFile(empty, "w"):
            pass
        result = run("validate", str(empty), timeout=QUICK)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("has no *.dist-info/RECORD", result.stderr)
        wheel = pure_wheel(self.dir, "tiny", "1.0")
        (self.dir / "afile").write_text("x")
        result = run("validate", str(wheel), "--work-dir", str(self.dir / "afile"), timeout=QUICK)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("is not a directory", result.stderr)

    def test_a_device_cc_no_gpu_has(self):
        result = run("doctor", "--matrix", "--device-cc", "99.9", timeout=QUICK)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("--device-cc 99.9", result.stderr)

    def test_matrix_junit_that_cannot_be_written_is_refused_before_any_cell(self):
        matrix = self.dir / "matrix.toml"
        matrix.write_text('recipes = ["torch"]\narch_sets = ["9.0"]\n')
        fifo = self.dir / "fifo"
        os.mkfifo(fifo)
        for junit, says in ((self.dir, "is a directory"), (fifo, "not a regular file"),
                            (self.dir / "no" / "such" / "junit.xml", "does not exist")):
            with self.subTest(junit=junit):
                result = run("matrix", str(matrix), "--junit", str(junit), "--cache-dir", str(self.dir / "cache"),
                             timeout=QUICK)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn(says, result.stderr)
                self.assertFalse((self.dir / "cache").exists())


if __name__ == "__main__":
    unittest.main()
