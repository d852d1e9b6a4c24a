"""Sharing wheels across builders: `archbuild cache push DEST` from two caches,
four pushers at once into one shared directory (consistent index, no lost
wheel, a key both have copied once), and real pip installing from that
directory served over HTTP by a real server on loopback."""
import json
import subprocess
import sys
import unittest
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from fixture_project import two_builders_caches
from harness import SYSTEM_NVCC, run, scratch_dir
from waiting import free_port, wait_until


@unittest.skipUnless(SYSTEM_NVCC.exists(), "needs nvcc 13 at /usr/local/cuda")
class SharedIndex(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = scratch_dir(cls)
        cls.data, cls.env, cls.caches = two_builders_caches(cls.root)

    def test_concurrent_pushes_and_pip_over_http(self):
        dest = self.root / "shared"
        order = ["a", "b", "a", "b"]
        with ThreadPoolExecutor(len(order)) as pool:
            results = list(pool.map(lambda name: run("cache", "push", str(dest), "--cache-dir", str(self.caches[name]),
                                                     "--json", env=self.env), order))
        for result in results:
            self.assertEqual(result.returncode, 0, result.stderr)
        reports = [json.loads(r.stdout) for r in results]
        pushed = [key for report in reports for key in report["pushed"]]
        self.assertEqual(len(pushed), 3)  # 8.0, 8.6 and one 9.0: nothing twice, nothing lost
        self.assertEqual(len(set(pushed)), 3)
        verify = run("cache", "verify", "--cache-dir", str(dest), "--json", env=self.env)
        self.assertEqual(verify.returncode, 0, verify.stdout)
        self.assertEqual(json.loads(verify.stdout)["entries"], 3)
        self.assertEqual(sorted(p.name for p in (dest / "wheels").iterdir() if "+" in p.name),
                         sorted(f"fixture-1.0+cu130.sm{a}-py3-none-linux_x86_64.whl" for a in ("80", "86", "90")))
        again = json.loads(run("cache", "push", str(dest), "--cache-dir", str(self.caches["a"]), "--json",
                               env=self.env).stdout)
        self.assertEqual((again["pushed"], len(again["already_there"])), ([], 2))

        port = free_port()
        log = self.root / "http-server.log"
        with open(log, "w") as out:
            server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
                                       "--directory", str(dest)], stdout=out, stderr=subprocess.STDOUT)
        self.addCleanup(server.wait)
        self.addCleanup(server.terminate)
        url = f"http://127.0.0.1:{port}/simple/"
        wait_until(lambda: urllib.request.urlopen(url, timeout=10).read() is not None,
                   f"python -m http.server to answer on port {port}", log=log, process=server)
        venv = self.root / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        install = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps",
                                  "--disable-pip-version-check", "--index-url", url, "fixture==1.0+cu130.sm86"],
                                 capture_output=True, text=True)
        self.assertEqual(install.returncode, 0, install.stderr)
        library = next(venv.glob("lib/python*/site-packages/fixture/libfixture.so"))
        (entry,) = json.loads(run("inspect", "--json", str(library)).stdout)["files"]
        self.assertEqual(sorted(entry["sass"]), ["sm_86"])

    def test_bad_destination(self):
        target = self.root / "a-file"
        target.write_text("x")
        result = run("cache", "push", str(target), "--cache-dir", str(self.caches["a"]), env=self.env)
        self.assertEqual(result.returncode, 2)
        self.assertIn("is not a directory", result.stderr)


if __name__ == "__main__":
    unittest.main()
