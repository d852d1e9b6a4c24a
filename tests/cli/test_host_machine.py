"""The host's CPU as archbuild sees it, and what it changes: run by the x86-64
build here and by the aarch64 build under qemu-user (scripts/test-aarch64.sh),
where uname says aarch64."""
import pathlib
import unittest

from harness import BIN, run, run_json

ELF_MACHINES = {62: "x86_64", 183: "aarch64"}


def binary_machine():
    header = pathlib.Path(BIN).read_bytes()[:20]
    return ELF_MACHINES[int.from_bytes(header[18:20], "little")]


class HostMachine(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.machine = binary_machine()

    def test_detect_names_the_cpu_the_binary_runs_on(self):
        _, report = run_json("detect")
        self.assertEqual(report["machine"], self.machine)
        self.assertIn(self.machine, run("detect").stdout)

    def test_the_torch_plan_is_this_hosts(self):
        result, plan = run_json("plan", "torch", "--arch", "9.0", "--cuda", "13.0")
        self.assertEqual(result.returncode, 0, result.stderr)
        env, key = plan["env"], plan["key_inputs"]
        if self.machine == "aarch64":
            # as PyTorch's own aarch64 wheels: no MAGMA, 64 KiB pages; the key names the host
            self.assertEqual(env["USE_MAGMA"], "0")
            self.assertEqual(env["CMAKE_SHARED_LINKER_FLAGS"], "-Wl,-z,max-page-size=0x10000")
            self.assertEqual(key["host_machine"], "aarch64")
            self.assertTrue(any(line.startswith("NVPL: ") for line in plan["libraries"]), plan["libraries"])
        else:
            self.assertNotIn("USE_MAGMA", env)
            self.assertNotIn("host_machine", key)  # x86-64 keys are as they always were
            self.assertFalse(any(line.startswith("NVPL: ") for line in plan["libraries"]), plan["libraries"])
        self.assertEqual(env["TORCH_CUDA_ARCH_LIST"], "9.0")  # always explicit: CMake's detection misreads 12.1

    def test_thor_and_gb10_names_with_this_toolkit(self):
        result = run("arch", "10.1")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.strip(), "11.0")  # CUDA 13.0's name for Jetson Thor
        self.assertIn("calls Jetson Thor 11.0, not 10.1", result.stderr)
        gb10 = run("arch", "native", "--cuda", "12.8", env={"ARCHBUILD_FAKE_GPUS": "GB10:12.1:122880"})
        self.assertEqual(gb10.returncode, 0, gb10.stderr)
        self.assertEqual(gb10.stdout.strip(), "12.0")
        self.assertIn("sm_120 code runs on CC 12.1", gb10.stderr)


if __name__ == "__main__":
    unittest.main()
