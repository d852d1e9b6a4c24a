"""`archbuild matrix`: recipes x arch sets from a TOML file, dependencies
first (the consumer after the fixture of the same arch set), a failing cell
that does not stop the others, its dependent skipped, a JSON report, JUnit
XML a CI system reads, and exit 1."""
import json
import os
import signal
import subprocess
import time
import unittest
import xml.etree.ElementTree as ElementTree

from fixture_project import add_consumer_recipe, data_dir_with_recipe, make_cuda_project
from harness import BIN, SYSTEM_NVCC, processes_mentioning, run, scratch_dir
from waiting import READY_BUDGET, scaled, wait_gone


@unittest.skipUnless(SYSTEM_NVCC.exists(), "needs nvcc 13 at /usr/local/cuda")
class Matrix(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = scratch_dir(cls)
        cls.data = data_dir_with_recipe(cls.root, make_cuda_project(cls.root))
        add_consumer_recipe(cls.root, cls.data)
        cls.env = {"ARCHBUILD_DATA_DIR": str(cls.data), "ARCHBUILD_FAKE_GPUS": None}

    def test_dependencies_first_failures_isolated_junit(self):
        matrix = self.root / "nightly.toml"
        # 5.0: CUDA 13 cannot target it, so the fixture cell fails and its consumer is skipped
        matrix.write_text('recipes = ["consumer", "fixture"]\narch_sets = ["8.0", "5.0", "9.0+PTX"]\njobs = 2\n')
        junit = self.root / "junit.xml"
        result = run("matrix", str(matrix), "--parallel", "2", "--cache-dir", str(self.root / "cache"), "--json",
                     "--junit", str(junit), env=self.env, timeout=1200)
        self.assertEqual(result.returncode, 1, result.stderr)
        cells = {c["name"]: c for c in json.loads(result.stdout)["cells"]}
        self.assertEqual({n: c["status"] for n, c in cells.items()},
                         {"fixture 8.0": "ok", "fixture 5.0": "failed", "fixture 9.0+PTX": "ok",
                          "consumer 8.0": "ok", "consumer 5.0": "skipped", "consumer 9.0+PTX": "ok"})
        for arch in ("8.0", "9.0+PTX"):
            self.assertGreaterEqual(cells[f"consumer {arch}"]["started"], cells[f"fixture {arch}"]["finished"])
            self.assertEqual(cells[f"consumer {arch}"]["needs"], [f"fixture {arch}"])
        self.assertIn("5.0", cells["fixture 5.0"]["message"])
        self.assertEqual(cells["fixture 5.0"]["exit_code"], 3)
        self.assertIn("needs fixture 5.0", cells["consumer 5.0"]["message"])
        self.assertEqual(cells["consumer 8.0"]["wheels"], ["consumer-1.0+cu130.sm80-py3-none-linux_x86_64.whl"])
        suite = ElementTree.parse(junit).getroot().find("testsuite")
        self.assertEqual((suite.get("tests"), suite.get("failures"), suite.get("skipped")), ("6", "1", "1"))
        failed = [c for c in suite.findall("testcase") if c.find("failure") is not None]
        self.assertEqual([c.get("name") for c in failed], ["fixture 5.0"])
        # the plain output: one line per finished cell and the summary table
        again = run("matrix", str(matrix), "--cache-dir", str(self.root / "cache"), env=self.env, timeout=1200)
        self.assertEqual(again.returncode, 1)
        self.assertIn("cache hit", again.stdout)
        self.assertRegex(again.stdout, r"consumer 5\.0\s+skipped")

    def test_interrupt_stops_every_running_cell(self):
        matrix = self.root / "interrupted.toml"
        matrix.write_text('recipes = ["consumer", "fixture"]\narch_sets = ["8.6", "8.9"]\njobs = 2\n')
        cache = self.root / "interrupt-cache"
        env = dict(os.environ, NO_COLOR="1", ARCHBUILD_DATA_DIR=str(self.data))
        env.pop("ARCHBUILD_FAKE_GPUS", None)
        process = subprocess.Popen([BIN, "matrix", str(matrix), "--parallel", "2", "--cache-dir", str(cache), "--json"],
                                   env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + scaled(READY_BUDGET)  # two configures at once on a busy machine
        while time.monotonic() < deadline:
            logs = list((cache / "matrix").glob("*/build.log"))
            if any("Building CUDA object" in log.read_text() for log in logs):
                break
            if process.poll() is not None:
                self.fail(f"the matrix ended before a compile started: {process.communicate()}")
            time.sleep(0.05)
        else:
            self.fail("no cell started compiling")
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=120)
        self.assertEqual(process.returncode, 130, stderr)
        cells = {c["name"]: c for c in json.loads(stdout)["cells"]}
        self.assertTrue(any("interrupted" in c["message"] for c in cells.values()), cells)
        for arch in ("8.6", "8.9"):  # nothing starts after the interrupt
            self.assertNotEqual(cells[f"consumer {arch}"]["status"], "ok")
        left = wait_gone(lambda: processes_mentioning(str(cache)), "the matrix's processes")
        self.assertEqual(left, [], "processes outlived the matrix")

    def test_bad_matrix_files(self):
        cases = {"recipes = [\"fixture\"]\n": "key 'arch_sets' is missing",
                 "recipes = [\"nope\"]\narch_sets = [\"9.0\"]\n": "unknown recipe 'nope'",
                 "recipes = [\"fixture\"]\narch_sets = [\"9.0\"]\ncolour = 1\n": ":3: key 'colour': unknown key",
                 "recipes = [\"fixture\"]\narch_sets = [\"9.0\"]\n[refs]\nconsumer = [\"v1\"]\n": "not one of the matrix's recipes",
                 "recipes = [\"fixture\"\n": "nightly.toml:"}
        for text, expected in cases.items():
            with self.subTest(text=text):
                matrix = self.root / "nightly.toml"
                matrix.write_text(text)
                result = run("matrix", str(matrix), env=self.env)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn(expected, result.stderr)
        # a FIFO is refused, never opened for reading (which would block forever); so is a huge file
        fifo = self.root / "fifo.toml"
        os.mkfifo(fifo)
        result = run("matrix", str(fifo), env=self.env, timeout=60)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("fifo.toml", result.stderr)
        huge = self.root / "huge.toml"
        huge.write_text("# padding\n" * 350000)  # 3.5 MB
        result = run("matrix", str(huge), env=self.env)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("huge.toml", result.stderr)


if __name__ == "__main__":
    unittest.main()
