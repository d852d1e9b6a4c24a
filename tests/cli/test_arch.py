"""`archbuild arch`: the resolved TORCH_CUDA_ARCH_LIST and its exit codes."""
import unittest

from harness import SYSTEM_NVCC, pypi_cuda_13_2, run, run_json


@unittest.skipUnless(SYSTEM_NVCC.exists(), "needs the CUDA 13.0 toolkit at /usr/local/cuda")
class ArchCommand(unittest.TestCase):
    def test_resolves_items_sorted_and_merged(self):
        result = run("arch", "9.0;8.6, sm_80 compute_90 12.0+PTX 9.0a")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout, "8.0;8.6;9.0+PTX;9.0a;12.0+PTX\n")

    def test_extension_dialect(self):
        # cpp_extension's names: Ampere is 8.0;8.6+PTX there
        result = run("arch", "Ampere;9.0a", "--dialect", "extension")
        self.assertEqual(result.stdout.strip(), "8.0;8.6+PTX;9.0a")
        result = run("arch", "10.0f", "--dialect", "extension")
        self.assertEqual(result.returncode, 2)
        self.assertIn("10.0f", result.stderr)

    def test_official_and_all_follow_the_installed_nvcc(self):
        # PyTorch's list for this host's wheels (the aarch64 build of archbuild runs here under qemu)
        machine = run_json("detect")[1]["machine"]
        self.assertIn(machine, ("x86_64", "aarch64"))
        self.assertEqual(run("arch", "official").stdout.strip(),
                         {"x86_64": "7.5;8.0;8.6;9.0;10.0;12.0+PTX", "aarch64": "8.0;9.0;10.0;11.0;12.0+PTX"}[machine])
        listed = set(run("arch", "all").stdout.strip().replace("+PTX", "").split(";"))
        codes = __import__("subprocess").run([str(SYSTEM_NVCC), "--list-gpu-code"], capture_output=True,
                                             text=True).stdout.split()
        from_nvcc = {f"{int(c[3:-1])}.{c[-1]}" for c in codes}
        self.assertEqual(listed, from_nvcc)

    def test_malformed_items_exit_2_naming_the_item(self):
        for item in ["sm_999", "8.6+PXT", "9.0b", "Ampre"]:
            with self.subTest(item=item):
                result = run("arch", f"8.0;{item}")
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn(item, result.stderr)
                self.assertEqual(result.stdout, "")

    def test_untargetable_item_exits_3_naming_toolkit_and_first_version(self):
        result = run("arch", "8.0;5.0")
        self.assertEqual(result.returncode, 3)
        self.assertIn("'5.0'", result.stderr)
        self.assertIn("CUDA 13.0", result.stderr)
        self.assertIn("12.9", result.stderr)
        result = run("arch", "12.0", "--cuda", "12.6")
        self.assertEqual(result.returncode, 3)
        self.assertIn("CUDA 12.6", result.stderr)
        self.assertIn("12.8 or newer", result.stderr)

    def test_same_item_resolves_with_12_9_tables(self):
        result = run("arch", "5.0;8.6", "--cuda", "12.9")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.strip(), "5.0;8.6")
        self.assertIn("not installed", result.stderr)

    def test_native_without_gpu_exits_3_and_suggests_arch(self):
        result = run("arch", "native", env={"ARCHBUILD_FAKE_GPUS": None})
        if result.returncode == 0:
            self.skipTest("this machine has a GPU; tests/gpu covers native")
        self.assertEqual(result.returncode, 3)
        self.assertIn("--arch", result.stderr)

    def test_native_with_fake_heterogeneous_gpus(self):
        env = {"ARCHBUILD_FAKE_GPUS": "NVIDIA H200:9.0:143771,NVIDIA RTX 6000 Ada:8.9:49140"}
        result = run("arch", "native", env=env)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.strip(), "8.9;9.0")
        self.assertIn("fake GPUs", result.stderr)

    def test_json(self):
        result, report = run_json("arch", "Hopper+PTX")
        self.assertEqual(result.returncode, 0)
        self.assertEqual(report["torch_cuda_arch_list"], "9.0+PTX")
        self.assertEqual(report["targets"][0], {"cc": "9.0", "variant": "", "sass": True, "ptx": True,
                                                "canonical": "9.0+PTX"})

    def test_cuda_option_picks_the_second_real_toolkit(self):
        root = pypi_cuda_13_2()
        result, report = run_json("arch", "sm_120", "--cuda", "13.2", env={"CUDA_HOME": str(root)})
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(report["cuda"], "13.2")
        self.assertIn(str(root), report["toolkit"])

    def test_usage_errors_exit_2(self):
        self.assertEqual(run("arch").returncode, 2)
        self.assertEqual(run("arch", "9.0", "--dialect", "bazel").returncode, 2)
        self.assertEqual(run("arch", "9.0", "--cuda", "thirteen").returncode, 2)
        self.assertEqual(run("arch", "9.0", "--cuda", "9.9").returncode, 2)
        self.assertEqual(run("frobnicate").returncode, 2)


class Basics(unittest.TestCase):
    def test_version_and_help(self):
        result = run("--version")
        self.assertEqual(result.returncode, 0)
        self.assertRegex(result.stdout, r"archbuild \d+\.\d+\.\d+")
        result = run("--help")
        self.assertEqual(result.returncode, 0)
        for command in ["detect", "arch", "check"]:
            self.assertIn(command, result.stdout)
        result = run("arch", "--help")
        self.assertEqual(result.returncode, 0)
        self.assertIn("--dialect", result.stdout)


if __name__ == "__main__":
    unittest.main()
