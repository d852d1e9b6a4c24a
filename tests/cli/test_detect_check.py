"""`archbuild detect` and `archbuild check` against real toolkits and compilers."""
import os
import pathlib
import signal
import subprocess
import time
import unittest

from harness import BIN, SYSTEM_NVCC, pypi_cuda_13_2, run, run_json, scratch_dir, session_processes, stop_session
from waiting import READY_BUDGET, scaled, wait_gone


@unittest.skipUnless(SYSTEM_NVCC.exists(), "needs the CUDA 13.0 toolkit at /usr/local/cuda")
class Detect(unittest.TestCase):
    def test_lists_both_real_toolkits(self):
        root = pypi_cuda_13_2()
        result, report = run_json("detect", env={"CUDA_HOME": str(root), "ARCHBUILD_FAKE_GPUS": None})
        releases = [t["release"] for t in report["toolkits"]]
        self.assertIn("13.2.78", releases)
        self.assertTrue(any(r.startswith("13.0.") for r in releases), releases)
        pypi = next(t for t in report["toolkits"] if t["release"] == "13.2.78")
        self.assertEqual(pypi["found_via"], ["CUDA_HOME"])
        self.assertIn("12.0", pypi["targets"])
        self.assertTrue(pypi["host_compiler"]["accepted"])
        self.assertTrue(any("no table for CUDA 13.2" in note for note in pypi["notes"]))
        if not report["gpus"]["devices"]:
            self.assertEqual(result.returncode, 3)
            self.assertTrue(report["gpus"]["unavailable_reason"])

    def test_no_gpu_is_one_clear_line_and_exit_3(self):
        result = run("detect", env={"ARCHBUILD_FAKE_GPUS": None})
        if result.returncode == 0:
            self.skipTest("this machine has a GPU")
        self.assertEqual(result.returncode, 3)
        self.assertEqual(len(result.stderr.strip().splitlines()), 1)
        self.assertIn("CUDA 13.0", result.stdout)  # the rest is still reported

    def test_fake_gpus(self):
        result, report = run_json("detect", env={"ARCHBUILD_FAKE_GPUS": "NVIDIA H200:9.0:143771"})
        self.assertEqual(result.returncode, 0)
        self.assertEqual(report["gpus"]["devices"][0]["cc"], "9.0")


def fake_gcc(directory, major):
    """A g++ that claims to be a newer gcc, so the real nvcc's host_config.h rejects it."""
    wrapper = directory / "g++"
    wrapper.write_text(f"""#!/bin/sh
for arg in "$@"; do
  case "$arg" in -dumpfullversion|-dumpversion) echo {major}.1.0; exit 0;; esac
done
exec /usr/bin/g++ -U__GNUC__ -D__GNUC__={major} -Wno-builtin-macro-redefined "$@"
""")
    wrapper.chmod(0o755)
    return wrapper


def stalling_gcc(directory):
    """A g++ that nvcc's preprocessing of the check's probe.cu waits on: it
    writes its arguments (which name the probe's scratch dir) to
    `started`, then sleeps; version queries and other calls go to g++."""
    wrapper = directory / "g++"
    started = directory / "started"
    wrapper.write_text(f"""#!/bin/sh
case "$*" in *probe.cu*) echo "$@" > '{started}.part'; mv '{started}.part' '{started}'; exec sleep 300;; esac
exec /usr/bin/g++ "$@"
""")
    wrapper.chmod(0o755)
    return wrapper, started


@unittest.skipUnless(SYSTEM_NVCC.exists(), "needs the CUDA 13.0 toolkit at /usr/local/cuda")
class Check(unittest.TestCase):
    def test_all_checks_pass_for_targetable_archs(self):
        result, report = run_json("check", "--arch", "8.0;9.0a;12.0+PTX")
        self.assertEqual(result.returncode, 0, result.stdout)
        names = [c["name"] for c in report["checks"]]
        for name in ["toolkit", "host compiler", "compile 8.0", "compile 9.0a", "compile 12.0+PTX",
                     "driver", "disk (build)", "disk (temp)", "memory"]:
            self.assertIn(name, names)
        self.assertTrue(report["ok"])

    def test_plain_output_has_one_verdict_line_per_check(self):
        result = run("check", "--arch", "9.0")
        self.assertEqual(result.returncode, 0, result.stdout)
        lines = result.stdout.strip().splitlines()
        self.assertTrue(all(line.split()[0] in {"ok", "warn", "FAIL", "skip"} for line in lines[:-1]), lines)
        self.assertNotIn("\x1b", result.stdout)

    def test_too_new_host_compiler_is_caught_before_the_build(self):
        wrapper = fake_gcc(scratch_dir(self), 99)
        result, report = run_json("check", "--arch", "9.0", env={"CUDAHOSTCXX": str(wrapper)})
        self.assertEqual(result.returncode, 3)
        checks = {c["name"]: c for c in report["checks"]}
        self.assertEqual(checks["host compiler"]["verdict"], "FAIL")
        self.assertIn("CUDAHOSTCXX", checks["host compiler"]["detail"])
        self.assertEqual(checks["compile 9.0"]["verdict"], "FAIL")
        self.assertIn("unsupported GNU version", checks["compile 9.0"]["detail"])

    def test_untargetable_arch_fails_before_compiling(self):
        result = run("check", "--arch", "5.0")
        self.assertEqual(result.returncode, 3)
        self.assertIn("12.9", result.stderr)

    def test_disk_check_fails_when_threshold_unmet(self):
        result, report = run_json("check", "--arch", "9.0", "--min-build-disk-gb", "100000000")
        self.assertEqual(result.returncode, 3)
        disk = next(c for c in report["checks"] if c["name"] == "disk (build)")
        self.assertEqual(disk["verdict"], "FAIL")

    def test_table_only_toolkit_cannot_build(self):
        result, report = run_json("check", "--arch", "5.0", "--cuda", "12.9")
        self.assertEqual(result.returncode, 3)
        self.assertEqual(report["checks"][0]["verdict"], "FAIL")

    def test_interrupt_removes_the_scratch_dir_and_stops_nvcc(self):
        for signo in (signal.SIGTERM, signal.SIGINT):
            with self.subTest(signal=signo.name):
                directory = scratch_dir(self)
                wrapper, started = stalling_gcc(directory)
                tmp = directory / "tmp"
                tmp.mkdir()
                env = dict(os.environ, NO_COLOR="1", CUDAHOSTCXX=str(wrapper), TMPDIR=str(tmp))
                process = subprocess.Popen([BIN, "check", "--arch", "9.0;8.0"], env=env, start_new_session=True,
                                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                self.addCleanup(stop_session, process)
                deadline = time.monotonic() + scaled(READY_BUDGET)
                while not started.exists() and process.poll() is None and time.monotonic() < deadline:
                    time.sleep(0.05)
                self.assertTrue(started.exists(), "nvcc never ran the host compiler on the probe")
                probe = next(arg for arg in started.read_text().split() if arg.endswith("probe.cu"))
                scratch = pathlib.Path(probe).parent
                self.assertEqual(scratch.parent, tmp)  # made under $TMPDIR
                self.assertTrue(scratch.name.startswith("archbuild-check-"))
                process.send_signal(signo)
                out, err = process.communicate(timeout=60)
                self.assertEqual(process.returncode, 130, err)
                self.assertIn(f"check interrupted by {signo.name}", err)
                self.assertFalse(scratch.exists(), "the scratch dir outlived the check")
                # nvcc, and the compiler it was waiting on, were stopped with it (a bounded
                # wait: a busy machine shows their exit in /proc a moment later)
                self.assertEqual(wait_gone(lambda: session_processes(process.pid), "nvcc and its compiler"), [])

    def test_second_toolkit_compiles_too(self):
        root = pypi_cuda_13_2()
        result, report = run_json("check", "--arch", "10.0f", "--cuda", "13.2",
                                  env={"CUDA_HOME": str(root)})
        self.assertEqual(result.returncode, 0, result.stdout)
        compile_check = next(c for c in report["checks"] if c["name"] == "compile 10.0f")
        self.assertIn("13.2.78", compile_check["detail"])


if __name__ == "__main__":
    unittest.main()
