"""One small project per pattern of public CUDA extensions that do not
honour TORCH_CUDA_ARCH_LIST (tests/cli/pattern_projects.py), built through
the generic path: each wheel's fatbins are inspected. A hardcoded
`-arch=sm_80` and a CMake target with fixed CUDA_ARCHITECTURES are rewritten
to the asked targets; with --keep-project-archs the label says what the wheel
holds; a project that builds its CPU variant when it sees no GPU is refused
with the switch its setup.py reads, and archbuild sets that switch and builds
again (unless --no-cuda-switches)."""
import json
import pathlib
import unittest

from harness import SYSTEM_NVCC, run, scratch_dir, torch_build_python
from pattern_projects import make_pattern_repo


@unittest.skipUnless(SYSTEM_NVCC.exists(), "needs nvcc 13 at /usr/local/cuda")
class ArchPatterns(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = scratch_dir(cls)
        cls.python = str(torch_build_python())
        cls.cache = cls.root / "cache"

    def build(self, repo, *args, torch=True):
        result = run("build", str(repo), "--cache-dir", str(self.cache), "--python", self.python,
                     *(["--use-installed-torch"] if torch else []), "--json", *args, env={"ARCHBUILD_FAKE_GPUS": None},
                     timeout=900)
        return result, (json.loads(result.stdout) if result.stdout.strip() else None)

    def wheel_code(self, report):
        """(sorted SASS, sorted PTX) over the wheel's CUDA libraries."""
        files = json.loads(run("inspect", "--json", report["wheels"][0]["path"]).stdout)["files"]
        return (sorted({arch for entry in files for arch in entry["sass"]}),
                sorted({arch for entry in files for arch in entry["ptx"]}))

    def assert_rewritten(self, report, before, calls=1):
        enforcement = report["build"]["arch_enforcement"]
        self.assertTrue(enforcement["enabled"])
        self.assertEqual((enforcement["nvcc_calls"], enforcement["rewritten"]), (calls, calls), enforcement)
        self.assertEqual({(c["before"], c["after"]) for c in enforcement["changes"]}, {(before, "sm_90")})
        self.assertEqual(self.wheel_code(report), (["sm_90"], []))
        self.assertIn("+cu130.sm90-", report["wheels"][0]["file"])

    def test_a_hardcoded_arch_flag_is_rewritten(self):
        result, report = self.build(make_pattern_repo(self.root, "arch-flag"), "--arch", "9.0")
        self.assertEqual(result.returncode, 0, result.stderr[-3000:])
        self.assertIn("sm_80;compute_80 -> sm_90", pathlib.Path(report["plan"]["log"]).read_text())
        self.assert_rewritten(report, "sm_80;compute_80")  # -arch=sm_80 is SASS and PTX of 8.0

    def test_a_cmake_target_with_fixed_architectures(self):
        repo = make_pattern_repo(self.root, "cmake-fixed")
        plan = run("plan", str(repo), "--arch", "9.0", "--cache-dir", str(self.cache), "--python", self.python,
                   "--use-installed-torch", "--json", env={"ARCHBUILD_FAKE_GPUS": None})
        self.assertEqual(plan.returncode, 0, plan.stderr)
        self.assertEqual(json.loads(plan.stdout)["env"]["CUDAARCHS"], "90-real")
        result, report = self.build(repo, "--arch", "9.0")
        self.assertEqual(result.returncode, 0, result.stderr[-3000:])
        # two -dc compiles and CMake's device link (which no compiler launcher sees)
        self.assert_rewritten(report, "sm_75;compute_75;sm_80;compute_80", calls=3)
        self.assertTrue(any(c["output"].endswith("cmake_device_link.o") for c in
                            report["build"]["arch_enforcement"]["changes"]), report["build"]["arch_enforcement"])
        # kept: the label says what the wheel holds (the device link keeps SASS of both, no PTX)
        result, report = self.build(repo, "--arch", "8.0", "--keep-project-archs")
        self.assertEqual(result.returncode, 0, result.stderr[-3000:])
        self.assertFalse(report["build"]["arch_enforcement"]["enabled"])
        self.assertEqual(self.wheel_code(report), (["sm_75", "sm_80"], []))
        self.assertIn("+cu130.sm75.sm80-", report["wheels"][0]["file"])
        self.assertTrue(report["published"])

    def test_a_cpu_only_build_names_the_switch_and_sets_it(self):
        repo = make_pattern_repo(self.root, "cpu-only")
        result, report = self.build(repo, "--arch", "9.0", "--no-cuda-switches")
        self.assertEqual(result.returncode, 1, result.stderr[-3000:])
        (validation,) = report["validation"]
        self.assertEqual(validation["cuda_libraries"], [])
        self.assertIn("CPU-only variant", validation["no_cuda_hint"])
        # the lookups that gate the .cu source, read from setup.py's syntax tree
        self.assertIn("constructs its CUDA extension only when FORCE_CUDA=1", validation["no_cuda_hint"])
        self.assertIn("build with --env FORCE_CUDA=1", validation["no_cuda_hint"])
        self.assertFalse(report["published"])
        self.assertFalse(list((self.cache / "store").glob("*/cpu_only_demo*")) if (self.cache / "store").exists()
                         else [])
        # by default archbuild sets the switch it found and builds again, saying so
        result, report = self.build(repo, "--arch", "9.0")
        self.assertEqual(result.returncode, 0, result.stderr[-3000:])
        self.assertEqual(report["cuda_switches_set"], [{"name": "FORCE_CUDA", "value": "1"}])
        self.assertEqual(self.wheel_code(report), (["sm_90"], []))
        self.assertEqual(report["plan"]["key_inputs"]["env.FORCE_CUDA"], "1")
        # the same as giving it: a cache hit
        result, report = self.build(repo, "--arch", "9.0", "--env", "FORCE_CUDA=1")
        self.assertEqual(result.returncode, 0, result.stderr[-3000:])
        self.assertTrue(report["cache_hit"])

    def test_the_hint_names_the_outer_switch_first_and_both_are_set(self):
        repo = make_pattern_repo(self.root, "gated")
        result, report = self.build(repo, "--arch", "9.0", "--env", "FORCE_CUDA=1",  # not enough
                                    "--no-cuda-switches")
        self.assertEqual(result.returncode, 1, result.stderr[-3000:])
        hint = report["validation"][0]["no_cuda_hint"]
        self.assertIn("only when DEMO_BUILD_LEGACY_CUDA=1, then FORCE_CUDA=1", hint)
        self.assertIn("--env DEMO_BUILD_LEGACY_CUDA=1 --env FORCE_CUDA=1", hint)
        result, report = self.build(repo, "--arch", "9.0", "--env", "FORCE_CUDA=1")
        self.assertEqual(result.returncode, 0, result.stderr[-3000:])
        self.assertEqual(report["cuda_switches_set"], [{"name": "DEMO_BUILD_LEGACY_CUDA", "value": "1"},
                                                       {"name": "FORCE_CUDA", "value": "1"}])
        self.assertEqual(self.wheel_code(report), (["sm_90"], []))

    def test_a_switch_that_turns_cuda_off_stays_off_and_the_user_may_set_it(self):
        repo = make_pattern_repo(self.root, "flagged")
        # FORCE_ONLY_CPU, which turns the flag off, is left alone; FORCE_CUDA is set
        result, report = self.build(repo, "--arch", "9.0")
        self.assertEqual(result.returncode, 0, result.stderr[-3000:])
        self.assertEqual(report["cuda_switches_set"], [{"name": "FORCE_CUDA", "value": "1"}])
        self.assertEqual(self.wheel_code(report), (["sm_90"], []))
        # the user asked for the CPU variant: nothing is set, the CPU-only wheel is refused as before
        result, report = self.build(repo, "--arch", "9.0", "--env", "FORCE_ONLY_CPU=1")
        self.assertEqual(result.returncode, 1, result.stderr[-3000:])
        self.assertEqual(report.get("cuda_switches_set", []), [])
        self.assertIn("FORCE_ONLY_CPU is not set", report["validation"][0]["no_cuda_hint"])

    def test_nvcc_from_path_in_a_recipe_of_the_cmake_dialect_is_enforced(self):
        # CUDA_HOME and PATH lead to the launcher toolkit in every dialect: plain `nvcc` is rewritten too
        repo = make_pattern_repo(self.root, "path-nvcc")
        result, report = self.build(repo, "--arch", "9.0", "--recipe", "cuda-demo", torch=False)
        self.assertEqual(result.returncode, 0, result.stderr[-3000:])
        self.assertTrue(report["plan"]["env"]["PATH"].startswith(report["plan"]["env"]["CUDA_HOME"] + "/bin:"))
        self.assert_rewritten(report, "sm_80;sm_86")


if __name__ == "__main__":
    unittest.main()
