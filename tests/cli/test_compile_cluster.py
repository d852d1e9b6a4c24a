"""Builds spread over a real sccache-dist compile cluster (tests/cli/
compile_cluster.py: a scheduler and two build servers, each in a network
namespace of its own, bubblewrap sandboxes, token auth) with
`compiler_launcher = "sccache"` and `compile_cluster`: where the compiles
ran, the wheel's fatbins and the cache key against a local build, and the
faults: a scheduler down at the start, a wrong token, a build server that
dies during the build."""
import json
import os
import pathlib
import threading
import unittest

from compile_cluster import (LoopbackCluster, kill_sccache_processes, sccache_bin_dir, sccache_processes,
                             why_no_cluster)
from fixture_project import data_dir_with_recipe, make_cuda_project
from extension_project import make_extension_repo
from harness import SYSTEM_NVCC, run, scratch_dir, torch_build_python
from waiting import wait_gone

@unittest.skipUnless(SYSTEM_NVCC.exists(), "needs nvcc (/usr/local/cuda)")
class CompileCluster(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        why_not = why_no_cluster()
        if why_not:
            raise unittest.SkipTest(why_not)
        cls.root = scratch_dir(cls)
        cls.data = data_dir_with_recipe(cls.root, make_cuda_project(cls.root))
        cls.cluster = LoopbackCluster(cls.root / "cluster").start()
        cls.addClassCleanup(cls.cluster.stop)
        cls.addClassCleanup(kill_sccache_processes, cls.root)  # whatever test_5 finds left is not left running
        cls.env = {"ARCHBUILD_DATA_DIR": str(cls.data), "ARCHBUILD_FAKE_GPUS": None,
                   "PATH": f"{sccache_bin_dir()}:{os.environ['PATH']}"}

    def build(self, cache, *extra, token=None, cluster=True, out=None):
        args = ["build", "fixture", "--arch", "8.0;9.0", "--cache-dir", str(cache), "--json"]
        if cluster:
            args += ["--compiler-launcher", "sccache", "--compile-cluster", self.cluster.scheduler_url,
                     "--compile-cluster-token-file", str(token or self.cluster.token_file)]
        else:
            args += ["--compiler-launcher", "none"]
        if out:
            args += ["--out", str(out)]
        return run(*args, *extra, env=self.env, timeout=1200)

    def report_of(self, result):
        self.assertEqual(result.returncode, 0, result.stderr[-4000:] + self.cluster.log_tail())
        return json.loads(result.stdout)

    def fatbins(self, report):
        wheel = report["wheels"][0]["path"]
        result = run("inspect", wheel, "--json")
        self.assertEqual(result.returncode, 0, result.stderr)
        # Each library's fatbin entries: arch, kind, size (the same toolkit
        # made them here and on the build servers: the same bytes).
        return {pathlib.Path(entry["path"]).name: sorted((e["arch"], e["kind"], e["size"]) for e in entry["entries"])
                for entry in json.loads(result.stdout)["files"]}

    def test_0_check_proves_the_link(self):
        args = ["check", "--arch", "9.0", "--cache-dir", str(self.root / "check"), "--compile-cluster",
                self.cluster.scheduler_url, "--json"]
        result = run(*args, "--compile-cluster-token-file", str(self.cluster.token_file), env=self.env)
        checks = {check["name"]: check for check in json.loads(result.stdout)["checks"]}
        self.assertEqual(checks["sccache"]["verdict"], "ok", checks["sccache"])
        self.assertIn("0.16.0", checks["sccache"]["detail"])
        self.assertEqual(checks["compile cluster"]["verdict"], "ok", checks["compile cluster"])
        self.assertIn("2 build servers", checks["compile cluster"]["detail"])
        self.assertIn("a trial compile ran on 10.231.", checks["compile cluster"]["detail"])
        # plan checks the link the same way and counts the cluster's cores.
        planned = run("plan", "fixture", "--arch", "9.0", "--cache-dir", str(self.root / "check"),
                      "--compiler-launcher", "sccache", "--compile-cluster", self.cluster.scheduler_url,
                      "--compile-cluster-token-file", str(self.cluster.token_file), env=self.env)
        self.assertEqual(planned.returncode, 0, planned.stderr)
        self.assertIn("# compile cluster: compiles go to the cluster: 2 build servers", planned.stdout)
        self.assertIn("on the compile cluster", planned.stdout)
        # A wrong token fails the check, naming the file.
        wrong = self.root / "check-wrong-token"
        wrong.write_text("nope\n")
        result = run(*args, "--compile-cluster-token-file", str(wrong), env=self.env)
        self.assertEqual(result.returncode, 3, result.stdout + result.stderr)
        checks = {check["name"]: check for check in json.loads(result.stdout)["checks"]}
        self.assertEqual(checks["compile cluster"]["verdict"], "FAIL")
        self.assertIn("refused archbuild's client token from " + str(wrong), checks["compile cluster"]["detail"])
        # Nothing of the check is left in the cache but sccache's own cache.
        self.assertEqual(sorted(p.name for p in (self.root / "check" / "sccache").iterdir()),
                         ["disk", "dist-client"])

    def test_1_compiles_run_on_the_cluster_and_the_wheel_is_a_local_builds(self):
        spread = self.report_of(self.build(self.root / "spread"))
        link = spread["build"]["compile_cluster"]
        self.assertTrue(link["distributing"], link)
        self.assertEqual(link["status"]["servers"], 2, link)
        compiles = link["compiles"]
        print(f"\n  on the cluster: {compiles['on_cluster']} ({compiles['by_server']}), here: {compiles['local']}, "
              f"from the cache: {compiles['cache_hits']}, cluster errors: {compiles['dist_errors']}")
        # Every .cu file's device passes (cicc, ptxas for two archs) and host compile went to the cluster.
        self.assertGreaterEqual(compiles["on_cluster"], 4 * 3, compiles)
        self.assertTrue(set(compiles["by_server"]) <= {f"{a}:10501" for a in self.cluster.server_addresses})
        self.assertIn("on the compile cluster", spread["plan"]["jobs_reason"])
        # The same build here: the same key and the same fatbins.
        local = self.report_of(self.build(self.root / "local", cluster=False))
        self.assertEqual(spread["key"], local["key"])
        self.assertEqual(self.fatbins(spread), self.fatbins(local))
        self.assertTrue(self.fatbins(spread), "the fixture's wheel holds CUDA code")

    def test_1b_a_torch_extension_compiles_on_the_cluster(self):
        """torch.utils.cpp_extension has no launcher variable: its nvcc is
        archbuild's launcher toolkit's, which runs the step launcher and sccache."""
        repo = make_extension_repo(self.root)
        result = run("build", str(repo), "--cache-dir", str(self.root / "extension"), "--python",
                     str(torch_build_python()), "--use-installed-torch", "--arch", "9.0", "--json",
                     "--compiler-launcher", "sccache", "--compile-cluster", self.cluster.scheduler_url,
                     "--compile-cluster-token-file", str(self.cluster.token_file), env=self.env, timeout=1500)
        report = self.report_of(result)
        self.assertIn("/launcher-cuda/sccache-", report["plan"]["env"]["CUDA_HOME"])
        compiles = report["build"]["compile_cluster"]["compiles"]
        print(f"\n  extension: on the cluster {compiles['by_server']}, here {compiles['local']}")
        # The .cu file's cudafe++, cicc, ptxas and host compile ran on the build servers.
        self.assertGreaterEqual(compiles["on_cluster"], 3, compiles)
        self.assertEqual({arch for archs in self.fatbins(report).values() for arch, kind, size in archs if kind == "sass"},
                         {"sm_90"})

    def test_2_a_wrong_token_fails_before_building(self):
        wrong = self.root / "wrong-token"
        wrong.write_text("not-the-token\n")
        cache = self.root / "wrong"
        result = self.build(cache, token=wrong)
        self.assertEqual(result.returncode, 3, result.stderr[-3000:])
        self.assertIn("refused archbuild's client token from " + str(wrong), result.stderr)
        self.assertFalse(list((cache / "store").glob("*/*.whl")) if (cache / "store").exists() else [])

    def test_3_a_build_server_dying_mid_build_leaves_a_correct_wheel(self):
        out = self.root / "dying-out"
        steps = out / "steps.log"
        killed, build_ended = threading.Event(), threading.Event()

        def kill_at_first_compile():
            # The step launcher writes steps.log as the first compile starts.
            while not build_ended.wait(0.1):
                if steps.exists() and steps.stat().st_size > 0:
                    self.cluster.kill_server(0)
                    killed.set()
                    return

        killer = threading.Thread(target=kill_at_first_compile)
        killer.start()
        try:
            result = self.build(self.root / "dying", out=out)
        finally:
            build_ended.set()
            killer.join()
        report = self.report_of(result)
        compiles = report["build"]["compile_cluster"]["compiles"]
        print(f"\n  server 1 killed at the first compile: {killed.is_set()}; on the cluster "
              f"{compiles['by_server']}, here {compiles['local']}, cluster errors {compiles['dist_errors']}")
        self.assertTrue(killed.is_set())
        local = self.report_of(self.build(self.root / "local-2", cluster=False))
        self.assertEqual(self.fatbins(report), self.fatbins(local))

    def test_4_a_scheduler_down_at_the_start_compiles_here(self):
        self.cluster.stop_scheduler()
        result = self.build(self.root / "down")
        report = self.report_of(result)
        link = report["build"]["compile_cluster"]
        self.assertFalse(link["distributing"])
        self.assertIn("not reachable", link["why_local"])
        self.assertEqual(link["compiles"]["on_cluster"], 0)
        self.assertNotIn("on the compile cluster", report["plan"]["jobs_reason"])

    def test_5_no_sccache_server_outlives_its_build(self):
        """Every build, check and plan above (a refused token among them)
        stopped the sccache server it started. Told to stop, a server may
        take a moment to be gone from /proc on a busy machine: a bounded
        wait, then none may be left."""
        left = wait_gone(lambda: sccache_processes(self.root), "the sccache servers of the commands above")
        self.assertEqual(left, [], "sccache servers still running (pid, SCCACHE_CONF, command line): "
                                   f"{left}\n{self.cluster.log_tail()}")


if __name__ == "__main__":
    unittest.main()
